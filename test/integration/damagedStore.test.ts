import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";

type JsonError = {error: {code: string, message: string, details: Record<string, unknown>}};

/** A database with one conversation, made by the CLI; returns its paths and a runner of `conversations list --json` on it. */
async function storedDatabase(label: string) {
    const {env, db} = hermeticCliEnv(label);
    const list = async () => {
        const run = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        return {...run, error: () => (JSON.parse(run.stderr) as JsonError).error};
    };
    expect((await list()).code).toBe(0); // created, encrypted, with its key file
    return {db, keyFile: `${db}-key.json`, env, list};
}

describe("a damaged key file", () => {
    it.each([
        {damage: "emptied", write: () => "", problem: "it is empty"},
        {damage: "cut short", write: (text: string) => text.slice(0, 30), problem: "it is not valid JSON: cut short or overwritten"},
        {damage: "a key of the wrong length", write: (text: string) => text.replace(/"key":"([0-9a-f]+)"/, '"key":"$1ab"'),
            problem: "its contents are not a key file Cleanroom can read"}
    ])("$damage: KEY_FILE_DAMAGED names the file, the database and what to do, without the raw parser text or the key", async ({write, problem}) => {
        const {db, keyFile, list} = await storedDatabase("damaged-key");
        const original = fs.readFileSync(keyFile, "utf8");
        fs.writeFileSync(keyFile, write(original));

        const run = await list();
        expect(run.code).toBe(1);
        const error = run.error();
        expect(error.code).toBe("KEY_FILE_DAMAGED");
        expect(error.details).toEqual({path: keyFile, database: db, problem});
        expect(error.message).toContain(`The key file ${keyFile} is damaged (${problem}), so ${db} cannot be opened`);
        expect(error.message).toContain("from a backup");
        expect(error.message).toContain(`cleanroom wipe --db ${db} --yes`);
        expect(run.stderr).not.toMatch(/JSON at position|Unexpected (end|token)|invalid_|"path":\[/);
        expect(run.stderr).not.toContain(JSON.parse(original).key);
    });
});

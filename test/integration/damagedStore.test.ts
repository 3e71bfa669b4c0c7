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

/** Overwrites `bytes` bytes of `file` at `offset` with a pattern unlike what is there. */
function damage(file: string, offset: number, bytes = 8) {
    const fd = fs.openSync(file, "r+");
    try {
        const old = Buffer.alloc(bytes);
        fs.readSync(fd, old, 0, bytes, offset);
        fs.writeSync(fd, old.map((byte) => byte ^ 0xa5), 0, bytes, offset);
    } finally {
        fs.closeSync(fd);
    }
}

describe("damage to the database's first page, told apart from another database's key file", () => {
    it.each([{where: "its table list", offset: 100}, {where: "its trailer (IV and HMAC)", offset: 4096 - 40}])(
        "damage in $where: DATABASE_DAMAGED, the key file named as the right one", async ({offset}) => {
            const {db, keyFile, list} = await storedDatabase("page-one");
            damage(db, offset);
            const run = await list();
            expect(run.code).toBe(1);
            const error = run.error();
            expect(error.code).toBe("DATABASE_DAMAGED");
            expect(error.details).toEqual({path: db, keyFile, page: 1});
            expect(error.message).toMatch(new RegExp(`^The database file ${db} is damaged: its first page .* fails its integrity check`));
            expect(error.message).not.toContain("another database");
        });

    it("a passphrase database with a damaged first page is DATABASE_DAMAGED, not WRONG_PASSPHRASE; a wrong passphrase is still WRONG_PASSPHRASE", async () => {
        const {db, env} = await storedDatabase("page-one-passphrase");
        const set = await runCliCapturing(["passphrase", "set", "--db", db], {env: {...env, CLEANROOM_NEW_PASSPHRASE: "correct horse battery"}});
        expect(set.code, set.stderr).toBe(0);
        damage(db, 200);
        const list = (passphrase: string) => runCliCapturing(["conversations", "list", "--db", db, "--json"], {env: {...env, CLEANROOM_PASSPHRASE: passphrase}});
        const right = await list("correct horse battery");
        expect((JSON.parse(right.stderr) as JsonError).error.code).toBe("DATABASE_DAMAGED");
        const wrong = await list("wrong horse battery");
        expect((JSON.parse(wrong.stderr) as JsonError).error.code).toBe("WRONG_PASSPHRASE");
    });

    it("another database's key file is still said to be one, and a damaged salt is named as the other possibility", async () => {
        const first = await storedDatabase("other-key-a");
        const second = await storedDatabase("other-key-b");
        fs.copyFileSync(second.keyFile, first.keyFile);
        const run = await first.list();
        const error = run.error();
        expect(error.code).toBe("STORE_KEY_UNAVAILABLE");
        expect(error.message).toContain("the key file belongs to another database (or the database file's first 16 bytes, its salt, are damaged");
    });
});

import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";

/** CLEANROOM_PASSPHRASE on a database that has no passphrase opens it with its key file, and says so instead of nothing. */
describe("CLEANROOM_PASSPHRASE on a database without a passphrase", () => {
    it("the command runs, with one warning on stderr (a JSON line with --json) that names the database and how to set a passphrase", async () => {
        const {env, db} = hermeticCliEnv("passphrase-ignored");
        expect((await runCliCapturing(["conversations", "list", "--db", db], {env})).code).toBe(0); // made without a passphrase
        const withVariable = {...env, CLEANROOM_PASSPHRASE: "a passphrase it does not have"};

        const plain = await runCliCapturing(["conversations", "list", "--db", db], {env: withVariable});
        expect(plain.code).toBe(0);
        expect(plain.stdout).toBe("No conversations.\n");
        expect(plain.stderr).toBe(`Warning: CLEANROOM_PASSPHRASE is set, but ${db} has no passphrase: it is opened with its key file ${db}-key.json, ` +
            `and the variable is ignored. To protect it with a passphrase: \`cleanroom passphrase set --db ${db}\` ` +
            "(the new passphrase from CLEANROOM_NEW_PASSPHRASE, or asked for).\n");

        const json = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env: withVariable});
        expect(json.code).toBe(0);
        expect(JSON.parse(json.stdout)).toEqual({conversations: []});
        expect(JSON.parse(json.stderr)).toEqual({warning: {code: "PASSPHRASE_IGNORED", message: expect.stringContaining(`${db} has no passphrase`)}});
        expect(JSON.parse(fs.readFileSync(`${db}-key.json`, "utf8"))).toMatchObject({mode: "device"}); // nothing changed
    });

    it("no warning where the variable is used: a database it protects, a new database it creates", async () => {
        const {env, db} = hermeticCliEnv("passphrase-used", {CLEANROOM_PASSPHRASE: "the passphrase of this database"});
        for (let run = 0; run < 2; run++) {
            const list = await runCliCapturing(["conversations", "list", "--db", db], {env});
            expect(list.code).toBe(0);
            expect(list.stderr).toBe("");
        }
        expect(JSON.parse(fs.readFileSync(`${db}-key.json`, "utf8"))).toMatchObject({mode: "passphrase"});
    });
});

import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

/**
 * A `--db` that is a symbolic link (a database moved to another drive, a dotfiles folder) opens the
 * database it leads to, with that database's own key file: everything kept beside a database goes
 * beside the real file, as SQLite puts its -wal and -shm. A re-key replaces the database, never the link.
 */
describe.skipIf(modelPath == null)("a --db that is a symbolic link", () => {
    it("opens the database it leads to with its key file; a passphrase set through the link protects that database and the link stays a link", async () => {
        const {env} = hermeticCliEnv("db-link");
        const realDir = tempDir("db-link-real");
        const linkDir = tempDir("db-link-name");
        const real = path.join(realDir, "app.db");
        const link = path.join(linkDir, "app.db");
        const chat = await runCliCapturing(["chat", "--model", modelPath!, "--db", real, "--conversation", "moved", "--prompt", "Once upon a time",
            "--max-tokens", "4", "--threads", "1", "--json"], {env});
        expect(chat.code, chat.stderr).toBe(0);
        fs.symlinkSync(real, link);

        const listIds = async (database: string, extraEnv: NodeJS.ProcessEnv = {}) => {
            const listed = await runCliCapturing(["conversations", "list", "--db", database, "--json"], {env: {...env, ...extraEnv}});
            expect(listed.code, listed.stderr).toBe(0);
            return (JSON.parse(listed.stdout) as {conversations: Array<{id: string}>}).conversations.map((conversation) => conversation.id);
        };
        expect(await listIds(link)).toEqual(["moved"]);

        const set = await runCliCapturing(["passphrase", "set", "--db", link, "--json"], {env: {...env, CLEANROOM_NEW_PASSPHRASE: "correct horse battery"}});
        expect(set.code, set.stderr).toBe(0);
        expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
        expect(fs.readlinkSync(link)).toBe(real);
        expect(await listIds(real, {CLEANROOM_PASSPHRASE: "correct horse battery"})).toEqual(["moved"]);
        expect(await listIds(link, {CLEANROOM_PASSPHRASE: "correct horse battery"})).toEqual(["moved"]);
        // Nothing of the database was made beside the link.
        expect(fs.readdirSync(linkDir)).toEqual(["app.db"]);
    });
});

import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {runCliGuarded} from "../helpers/runCliGuarded.js";
import {tempDir} from "../helpers/tempCore.js";

/** Paths that cannot hold a database fail at once, through the CLI, with the path and the reason. */
describe("--db on a path that cannot hold a database", () => {
    const root = tempDir("db-path");
    const aFile = path.join(root, "plain-file");
    fs.writeFileSync(aFile, "not a folder\n");
    const aFolder = path.join(root, "a-folder.db");
    fs.mkdirSync(aFolder);

    const cases: Array<{name: string, db: string, reason: RegExp}> = [
        {name: "a missing folder under /proc (mkdir -p used to spin forever there)", db: "/proc/nope/x.db", reason: /\/proc is procfs/},
        {name: "an existing folder of /proc", db: "/proc/self/x.db", reason: /\/proc is procfs/},
        {name: "a folder under /sys", db: "/sys/nope/deeper/x.db", reason: /\/sys is sysfs/},
        {name: "a path through a regular file", db: path.join(aFile, "sub", "x.db"), reason: new RegExp(`${aFile} is a file, not a folder`)},
        {name: "a folder where the file should be", db: aFolder, reason: /it is a folder, not a database file/}
    ];

    it.each(cases)("$name: a clear STORAGE_PATH_UNUSABLE error, exit code 1, no hang", async ({db, reason}) => {
        const run = await runCliGuarded(["conversations", "list", "--db", db, "--json"], {hangGuardMs: 30_000});
        expect(run.hung, "the CLI was still running after 30 s").toBe(false);
        expect(run.code).toBe(1);
        const {error} = JSON.parse(run.stderr) as {error: {code: string, message: string, details: {path: string}}};
        expect(error.code).toBe("STORAGE_PATH_UNUSABLE");
        expect(error.message).toContain("for the database");
        expect(error.message).toMatch(reason);
        expect(run.stdout).toBe("");
    }, 40_000);

    it("the text output says the same in one line, without a stack trace", async () => {
        const run = await runCliGuarded(["conversations", "list", "--db", "/proc/nope/x.db"], {hangGuardMs: 30_000});
        expect(run.hung).toBe(false);
        expect(run.code).toBe(1);
        expect(run.stderr.trim()).toMatch(/^cleanroom: Cannot use \/proc\/nope for the database: \/proc is procfs.*cannot hold files\. \[STORAGE_PATH_UNUSABLE\]$/);
    }, 40_000);

    it("a usable nested path is still created (folders 0700) and works", async () => {
        const db = path.join(root, "new", "deeper", "cleanroom.db");
        const run = await runCliGuarded(["conversations", "list", "--db", db, "--json"], {hangGuardMs: 30_000});
        expect(run.code).toBe(0);
        expect(JSON.parse(run.stdout)).toEqual({conversations: []});
        expect(fs.statSync(path.join(root, "new")).mode & 0o777).toBe(0o700);
        expect(fs.statSync(db).isFile()).toBe(true);
    }, 40_000);
});

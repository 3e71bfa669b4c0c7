import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {tempDir} from "../helpers/tempCore.js";

type WipeReport = {checks: Array<{path: string, what: string, removed: boolean, remains: boolean}>, clean: boolean};

/** `wipe --db <symbolic link>`: the database the link leads to is wiped and removed, then the link; the report is true. */
describe("wipe on a --db that is a symbolic link", () => {
    it("wipes and removes the real database and its key file, then the link; nothing remains, as reported", async () => {
        const {env} = hermeticCliEnv("wipe-link");
        const realDir = tempDir("wipe-link-real");
        const linkDir = tempDir("wipe-link-name");
        const real = path.join(realDir, "app.db");
        const link = path.join(linkDir, "app.db");
        expect((await runCliCapturing(["conversations", "list", "--db", real], {env})).code).toBe(0);
        fs.symlinkSync(real, link);
        // A second name of the database's bytes, to see what the wipe left in them.
        const secondName = path.join(tempDir("wipe-link-bytes"), "same-inode");
        fs.linkSync(real, secondName);

        const run = await runCliCapturing(["wipe", "--db", link, "--yes", "--json"], {env});
        expect(run.code, run.stderr).toBe(0);
        const report = JSON.parse(run.stdout) as WipeReport;
        const check = (file: string) => report.checks.find((entry) => entry.path === file);
        expect(check(real)).toMatchObject({removed: true, remains: false});
        expect(check(`${real}-key.json`)).toMatchObject({removed: true, remains: false});
        expect(check(link)).toMatchObject({what: `symbolic link to the database (${real})`, removed: true, remains: false});
        expect(report.clean).toBe(true);

        expect(fs.readdirSync(realDir)).toEqual([]);
        expect(fs.readdirSync(linkDir)).toEqual([]);
        const left = fs.readFileSync(secondName);
        expect(left.length).toBeGreaterThan(0);
        expect(left.every((byte) => byte === 0), "the database's bytes were zeroed before it was removed").toBe(true);
    });

    it("a link that leads nowhere is removed as a link and reported", async () => {
        const {env} = hermeticCliEnv("wipe-dangling");
        const link = path.join(tempDir("wipe-dangling"), "app.db");
        fs.symlinkSync(path.join(tempDir("wipe-dangling-gone"), "gone.db"), link);
        const run = await runCliCapturing(["wipe", "--db", link, "--yes"], {env});
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(new RegExp(`^removed  ${link} `, "m"));
        expect(run.stdout).toMatch(/nothing remains/);
        expect(fs.lstatSync(link, {throwIfNoEntry: false})).toBeUndefined();
    });
});

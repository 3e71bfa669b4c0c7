import {spawn, spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {cliCommand} from "../../tools/spawnCli.js";
import {removeStaleScratchDirs} from "../../src/core/node/engine/PrivateScratchDir.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();
const scratchRoot = () => process.env.CLEANROOM_SCRATCH_DIR!;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse())
        await cleanup();
});

/** A pid that belonged to a process that has exited. */
function deadPid() {
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    return Number(child.stdout.toString());
}

describe("stale scrub scratch folders", () => {
    it("removes the folders of dead processes and old unowned ones, keeps live processes' and anything else", () => {
        const parent = tempDir("sweep");
        const make = (name: string) => {
            fs.mkdirSync(path.join(parent, name));
            fs.writeFileSync(path.join(parent, name, "zero-1.state"), "residue");
        };
        make(`cleanroom-scrub-${deadPid()}-aaaaaa`);
        make(`cleanroom-scrub-${process.pid}-bbbbbb`);
        make(`cleanroom-scrub-${process.ppid}-cccccc`);
        make("cleanroom-scrub-OldNam");
        const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
        fs.utimesSync(path.join(parent, "cleanroom-scrub-OldNam"), twoDaysAgo, twoDaysAgo);
        make("cleanroom-scrub-NewNam");
        make("somebody-elses-folder");

        expect(removeStaleScratchDirs(parent)).toBe(2);
        expect(fs.readdirSync(parent).sort()).toEqual([
            "cleanroom-scrub-NewNam", `cleanroom-scrub-${process.pid}-bbbbbb`, `cleanroom-scrub-${process.ppid}-cccccc`, "somebody-elses-folder"
        ].sort());
    });

    it.skipIf(modelPath == null)("a core killed with -9 while it runs leaves its folder; the next core to start removes it and records it", async () => {
        const database = path.join(tempDir("sweep-db"), "test.db");
        const {command, args} = cliCommand(["chat", "--model", modelPath!, "--db", database, "--threads", "1",
            "--prompt", "Once upon a time", "--max-tokens", "1800", "--context-size", "2048", "--temperature", "0", "--json"]);
        // A turn that fits the context and runs for seconds (greedy: the test model keeps going for 1,800
        // tokens). The old 4,000-token budget overflowed the 2,048-cell context, so the CLI exited during
        // startup and the folder was seen only when a poll happened to land in that short window.
        const child = spawn(command, args, {stdio: "ignore"});
        cleanups.push(() => void child.kill("SIGKILL"));

        const folderOf = (pid: number) => fs.readdirSync(scratchRoot()).find((name) => name.startsWith(`cleanroom-scrub-${pid}-`));
        const deadline = Date.now() + 90_000;
        while (folderOf(child.pid!) == null && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 50));
        const left = folderOf(child.pid!);
        expect(left, "the CLI made its scratch folder").toBeDefined();
        child.kill("SIGKILL");
        await new Promise((resolve) => child.once("exit", resolve));
        expect(fs.existsSync(path.join(scratchRoot(), left!)), "kill -9 leaves the folder behind").toBe(true);

        const {core} = await createTestCore(modelPath!);
        cleanups.push(() => core.dispose());
        expect(fs.existsSync(path.join(scratchRoot(), left!))).toBe(false);
        expect(core.auditEvents({kinds: ["scratch.swept"]}).map((event) => event.data)).toEqual([{staleFoldersRemoved: 1}]);
    });
});

import fs from "node:fs";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import type {ApiEventPayload} from "../../src/core/common/api/index.js";
import {paddedModel} from "../helpers/paddedModel.js";
import {RangeServer} from "../helpers/rangeServer.js";
import {runCliGuarded} from "../helpers/runCliGuarded.js";
import {mountSmallDisk} from "../helpers/smallDisk.js";
import {connectToWebMode, startWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const MiB = 1024 * 1024;
/** The CLI and the app keep 256 MiB free: the disk is that plus 8 MiB, and another writer takes the rest mid-download. */
const diskBytes = 264 * MiB;
const disk = modelPath == null ? {unavailable: "the test model is missing"} : mountSmallDisk(diskBytes);
if ("unavailable" in disk)
    console.warn(`[disk-full process tests skipped] ${disk.unavailable}`);

/**
 * The CLI and web mode, each in its own process, download from a real server onto a real small
 * disk that another writer fills mid-download: a clear DISK_FULL, no stack trace, no crash.
 */
describe.skipIf("unavailable" in disk)("a disk that fills during a download, through the CLI and web mode", () => {
    const small = disk as Exclude<typeof disk, {unavailable: string}>;
    let server: RangeServer;
    let ballastTimer: NodeJS.Timeout | null = null;

    beforeAll(async () => {
        server = await RangeServer.start({
            files: {"twenty.gguf": paddedModel(fs.readFileSync(modelPath!), 20 * MiB)},
            dataResponse: "sizeless", writeDelayMs: 10
        });
    });
    afterEach(() => {
        if (ballastTimer != null)
            clearInterval(ballastTimer);
        server.resetLog();
        for (const entry of fs.readdirSync(small.dir))
            fs.rmSync(path.join(small.dir, entry), {recursive: true, force: true});
    });
    afterAll(async () => {
        await server?.close();
        small.unmount();
    });

    /**
     * Once the download has written 512 KiB into `dir`, another writer takes all but 128 KiB of the
     * disk. (Not once the server sent 512 KiB: a slow client may not have made its up-front space
     * check yet, and would see the ballast half-written and refuse the download before it starts.)
     */
    function fillDiskMidDownload(dir: string) {
        ballastTimer = setInterval(() => {
            if (bytesWrittenUnder(dir) >= 512 * 1024) {
                clearInterval(ballastTimer!);
                fs.writeFileSync(path.join(small.dir, "ballast"), Buffer.alloc(Math.max(0, small.freeBytes() - 128 * 1024)));
            }
        }, 5);
    }

    const outputs: Array<{output: string, flags: string[]}> = [{output: "JSON", flags: ["--json"]}, {output: "text", flags: []}];
    test.each(outputs)("cleanroom models download ($output output): exit code 1, one clear DISK_FULL error, no stack trace, nothing left behind", async ({flags}) => {
        const dir = path.join(small.dir, "cli-models");
        fillDiskMidDownload(dir);
        const run = await runCliGuarded(["models", "download", server.url("twenty.gguf"), "--allow-loopback", "--dir", dir, ...flags], {hangGuardMs: 120_000});

        expect(run.hung).toBe(false);
        expect(run.code).toBe(1);
        expect(run.stderr).not.toMatch(/^\s+at /m);
        expect(run.stderr).not.toMatch(/ENOSPC: no space left on device, write\n/);
        if (flags.includes("--json")) {
            const lines = run.stderr.trim().split("\n").filter((line) => line.startsWith("{"));
            expect(lines).toHaveLength(1);
            const {error} = JSON.parse(lines[0]!) as {error: {code: string, message: string, details: Record<string, unknown>}};
            expect(error).toMatchObject({code: "DISK_FULL", details: {phase: "during", partial: "deleted"}});
            console.info(`[cli] stopped by ${String(error.details.trigger)} after ${String(error.details.writtenBytes)} bytes`);
        } else
            expect(run.stderr).toMatch(/^cleanroom: The disk is full \(.*\): the download into .* stopped after .*deleted to give the space back.* \[DISK_FULL\]$/m);
        expect(fs.readdirSync(dir)).toEqual([]);
    }, 180_000);

    test("web mode: the download fails with DISK_FULL and the server lives on, answering calls", async () => {
        const dir = tempDir("diskfull-web");
        const modelsDir = path.join(small.dir, "web-models");
        const web = await startWebMode(["--no-model", "--db", path.join(dir, "web.db"), "--models-dir", modelsDir, "--allow-loopback-downloads"],
            {CLEANROOM_HOME: path.join(dir, "home"), TMPDIR: dir});
        try {
            const {client, close} = await connectToWebMode(web);
            const events: Array<ApiEventPayload<"models.downloadProgress">> = [];
            client.subscribe("models.downloadProgress", (event) => events.push(event));

            fillDiskMidDownload(modelsDir);
            await client.call("models.download", {url: server.url("twenty.gguf")});
            await expect.poll(() => events.at(-1)?.state, {timeout: 120_000}).toBe("failed");
            expect(events.at(-1)!.error).toMatchObject({code: "DISK_FULL", details: {phase: "during", partial: "deleted"}});
            expect(fs.readdirSync(modelsDir).filter((name) => name !== "registry.json")).toEqual([]);

            expect(web.process.exitCode).toBeNull();
            const listed = await client.call("models.list", {});
            expect(listed.downloads).toEqual([]);
            expect(await client.call("conversations.list", {})).toEqual([]);
            close();
        } finally {
            await web.stop();
        }
        expect(web.stderr()).not.toMatch(/ENOSPC|Unhandled/);
    }, 300_000);
});

/** Bytes in the files under `dir` (none while it does not exist yet). */
function bytesWrittenUnder(dir: string): number {
    try {
        return fs.readdirSync(dir, {recursive: true, withFileTypes: true})
            .filter((entry) => entry.isFile())
            .reduce((sum, entry) => sum + (fs.statSync(path.join(entry.parentPath, entry.name), {throwIfNoEntry: false})?.size ?? 0), 0);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return 0;
        throw error;
    }
}

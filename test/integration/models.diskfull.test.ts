import fs from "node:fs";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import {ModelDownloader, sha256File} from "../../src/core/node/models/ModelDownloader.js";
import {paddedModel, sha256Of} from "../helpers/paddedModel.js";
import {loopbackFetcher, RangeServer} from "../helpers/rangeServer.js";
import {mountSmallDisk} from "../helpers/smallDisk.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const MiB = 1024 * 1024;
const disk = modelPath == null ? {unavailable: "the test model is missing"} : mountSmallDisk(8 * MiB);
if ("unavailable" in disk)
    console.warn(`[disk-full tests skipped] ${disk.unavailable}`);

/** Unhandled rejections seen while a test ran (node-llama-cpp's downloader left one per failed write, which ends the process). */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
/** Node's names for file operations in flight (`process.getActiveResourcesInfo()`). */
const fileWork = new Set(["FSReqCallback", "FSReqPromise", "FileHandle", "FileHandleCloseReq"]);

/**
 * A real 8 MiB filesystem (tmpfs) and a real HTTP server on 127.0.0.1: the disk fills during a
 * download, or a server announces one size and sends another.
 */
describe.skipIf("unavailable" in disk)("model downloads on a disk that fills up (8 MiB tmpfs)", () => {
    const small = disk as Exclude<typeof disk, {unavailable: string}>;
    let server: RangeServer;
    let twenty: Buffer;
    let six: Buffer;
    let dir: string;

    beforeAll(async () => {
        const model = fs.readFileSync(modelPath!);
        twenty = paddedModel(model, 20 * MiB);
        six = paddedModel(model, 6 * MiB);
        server = await RangeServer.start({files: {"twenty.gguf": twenty, "six.gguf": six}});
        process.on("unhandledRejection", onUnhandled);
    });
    afterEach(() => {
        server.options = {files: server.options.files};
        server.resetLog();
        for (const entry of fs.readdirSync(small.dir))
            fs.rmSync(path.join(small.dir, entry), {recursive: true, force: true});
        unhandled.length = 0;
    });
    afterAll(async () => {
        process.off("unhandledRejection", onUnhandled);
        await server?.close();
        small.unmount();
    });

    /** Once the server has sent `afterBytes` of a data response, another writer takes all but `leaveBytes` of the disk. */
    function fillDiskDuringTransfer(afterBytes: number, leaveBytes: number) {
        const ballast = path.join(small.dir, "ballast");
        const timer = setInterval(() => {
            if (server.requests.some((request) => request.range !== "bytes=0-0" && request.bytesSent >= afterBytes)) {
                clearInterval(timer);
                fs.writeFileSync(ballast, Buffer.alloc(Math.max(0, small.freeBytes() - leaveBytes)));
            }
        }, 5);
        return {ballast, stop: () => clearInterval(timer)};
    }

    /** Waits until no file work of the download is in flight, then one turn of the event loop: a rejection that escaped would be reported by then. */
    async function settle() {
        await expect.poll(() => process.getActiveResourcesInfo().filter((resource) => fileWork.has(resource)), {timeout: 10_000}).toEqual([]);
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled, "no unhandled rejection").toEqual([]);
    }

    test("a server that never says the size streams 20 MiB into 8 MiB: DISK_FULL with the bytes, the partial file deleted, nothing unhandled", async () => {
        dir = path.join(small.dir, "models");
        server.options.dataResponse = "sizeless";
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 0}).download({url: server.url("twenty.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({name: "DiskFullError", code: "DISK_FULL", details: {phase: "during", trigger: "ENOSPC", partial: "deleted", stillToFetchBytes: null}});
        const details = (error as {details: {writtenBytes: number, freeBytes: number}}).details;
        expect(details.writtenBytes).toBeGreaterThan(6 * MiB);
        expect(details.writtenBytes).toBeLessThanOrEqual(8 * MiB);
        expect((error as Error).message).toMatch(/^The disk is full \(writing failed with ENOSPC\): the download into .* stopped after .*The partial file .* was deleted to give the space back/);
        expect(fs.readdirSync(dir)).toEqual([]);
        expect(small.freeBytes()).toBeGreaterThan(7 * MiB); // the space is back
        expect(details.freeBytes).toBeGreaterThan(7 * MiB);
        await settle();
    });

    test("another program fills the disk mid-download (size known): DISK_FULL says how much was needed and free, and deletes the partial file by default", async () => {
        dir = path.join(small.dir, "models");
        server.options.writeDelayMs = 10;
        const filler = fillDiskDuringTransfer(MiB, 256 * 1024);
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 0}).download({url: server.url("six.gguf"), sha256: sha256Of(six)})
            .catch((caught: unknown) => caught)
            .finally(filler.stop);

        // Stopped by the write's ENOSPC or, first, by the room check seeing the rest cannot fit: either way before a crash.
        expect(error).toMatchObject({code: "DISK_FULL", details: {phase: "during", partial: "deleted", keptBytes: 0, stillToFetchBytes: six.length}});
        expect(["ENOSPC", "reserve"]).toContain((error as {details: {trigger: string}}).details.trigger);
        const details = (error as {details: {neededBytes: number, freeBytes: number, shortBytes: number}}).details;
        expect(details.neededBytes).toBe(six.length);
        expect(details.shortBytes).toBe(six.length - details.freeBytes);
        expect(fs.readdirSync(dir)).toEqual([]);
        await settle();
    });

    test("kept by choice (partialOnDiskFull: keep): once space is freed, the same download resumes from the kept bytes and verifies", async () => {
        dir = path.join(small.dir, "models");
        server.options.writeDelayMs = 10;
        const downloader = new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 0, partialOnDiskFull: "keep"});
        const filler = fillDiskDuringTransfer(MiB, 256 * 1024);
        const error = await downloader.download({url: server.url("six.gguf"), sha256: sha256Of(six)}).catch((caught: unknown) => caught).finally(filler.stop);

        expect(error).toMatchObject({code: "DISK_FULL", details: {phase: "during", partial: "kept"}});
        const kept = (error as {details: {keptBytes: number}}).details.keptBytes;
        expect(kept).toBeGreaterThanOrEqual(MiB);
        expect((error as Error).message).toMatch(/were kept: free some space and run the same download again to resume/);
        const {partPath, statePath} = downloader.pathsFor("six.gguf");
        expect(fs.statSync(partPath).size).toBe(kept);
        expect(fs.existsSync(statePath)).toBe(true);

        fs.rmSync(filler.ballast); // the user frees some space
        server.resetLog();
        server.options.writeDelayMs = 0;
        const result = await downloader.download({url: server.url("six.gguf"), sha256: sha256Of(six)});
        expect(result.resumedFromBytes).toBe(kept);
        expect(server.dataRequests().map((request) => request.range)).toEqual([`bytes=${kept}-`]);
        expect(await sha256File(result.path)).toBe(sha256Of(six));
        expect(fs.readdirSync(dir)).toEqual(["six.gguf"]);
        await settle();
    });

    test("a server that announces 1 MiB in its probe and then streams 20 MiB is cut off at 1 MiB, with a clear error, and the file deleted", async () => {
        dir = path.join(small.dir, "models");
        server.options.probeTotalBytes = MiB;
        server.options.dataResponse = "whole-chunked";
        server.options.writeDelayMs = 2;
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 0}).download({url: server.url("twenty.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DOWNLOAD_SIZE_MISMATCH", details: {announcedBytes: MiB}});
        expect((error as Error).message).toMatch(/announced 1048576 bytes but sent more: the transfer was cut off at 1048576 bytes and the file deleted/);
        expect(fs.readdirSync(dir)).toEqual([]);
        await expect.poll(() => server.requests.at(-1)!.bytesSent < twenty.length, {timeout: 5000}).toBe(true); // the connection was cut, not drained
        await settle();
    });

    test("one that announces 1 MiB and answers with a Content-Length of 20 MiB is refused before a byte is written", async () => {
        dir = path.join(small.dir, "models");
        server.options.probeTotalBytes = MiB;
        server.options.dataResponse = "whole-with-length";
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 0}).download({url: server.url("twenty.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DOWNLOAD_SIZE_MISMATCH", details: {announcedBytes: MiB, remoteBytes: twenty.length}});
        expect(fs.readdirSync(dir)).toEqual([]);
        await settle();
    });

    test("the reserve is kept during the transfer too: free space falling under it stops the download before the disk is full", async () => {
        dir = path.join(small.dir, "models");
        server.options.dataResponse = "sizeless";
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 2 * MiB}).download({url: server.url("twenty.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DISK_FULL", details: {phase: "during", trigger: "reserve", partial: "deleted", reserveBytes: 2 * MiB}});
        expect((error as {details: {writtenBytes: number}}).details.writtenBytes).toBeLessThanOrEqual(7 * MiB);
        expect(fs.readdirSync(dir)).toEqual([]);
        await settle();
    });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import type {DownloadProgress} from "../../src/core/common/models.js";
import {ModelDownloader, sha256File} from "../../src/core/node/models/ModelDownloader.js";
import {paddedModel, sha256Of as sha256} from "../helpers/paddedModel.js";
import {loopbackFetcher, RangeServer} from "../helpers/rangeServer.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const modelSha256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d";


describe.skipIf(modelPath == null)("model download from a local HTTP server", () => {
    let model: Buffer;
    let big: Buffer;
    let huge: Buffer;
    let server: RangeServer;
    const dirs: string[] = [];
    const tempDir = () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-dl-"));
        dirs.push(dir);
        return dir;
    };

    beforeAll(async () => {
        model = fs.readFileSync(modelPath!);
        big = paddedModel(model, 12 * 1024 * 1024);
        huge = paddedModel(model, 64 * 1024 * 1024);
        server = await RangeServer.start({files: {"stories260K.gguf": model, "big.gguf": big, "huge.gguf": huge}});
    });
    afterEach(() => {
        server.options = {files: server.options.files};
        server.resetLog();
    });
    afterAll(async () => {
        await server?.close();
        for (const dir of dirs)
            fs.rmSync(dir, {recursive: true, force: true});
    });

    test("downloads into .part, checks size and SHA-256, then renames; progress reports bytes, total and speed", async () => {
        const dir = tempDir();
        const events: DownloadProgress[] = [];
        const result = await new ModelDownloader({fetcher: loopbackFetcher, dir, progressIntervalMs: 0}).download({
            url: server.url("stories260K.gguf"), sha256: modelSha256, expectedBytes: model.length, onProgress: (event) => events.push(event)
        });

        expect(result.path).toBe(path.join(dir, "stories260K.gguf"));
        expect(result.sha256).toBe(modelSha256);
        expect(result.sha256Checked).toBe(true);
        expect(result.fileBytes).toBe(model.length);
        expect(fs.readdirSync(dir)).toEqual(["stories260K.gguf"]); // no .part or .part.json left behind
        const downloading = events.filter((event) => event.phase === "downloading");
        expect(downloading.length).toBeGreaterThan(0);
        expect(downloading.at(-1)).toMatchObject({downloadedBytes: model.length, totalBytes: model.length});
        expect(downloading.every((event, index) => index === 0 || event.downloadedBytes >= downloading[index - 1]!.downloadedBytes)).toBe(true);
        expect(events.at(-1)).toMatchObject({phase: "verifying", downloadedBytes: model.length});
        // The first request is our own 1-byte probe; data requests are ranged.
        expect(server.requests[0]!.range).toBe("bytes=0-0");
        expect(server.dataRequests().length).toBeGreaterThan(0);
    });

    test("a connection dropped part-way is resumed with a Range request and the file still matches its SHA-256", async () => {
        const dir = tempDir();
        server.options.dropAfter = (index) => (index === 0 ? 300_000 : null);
        const result = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf"), sha256: modelSha256});

        const data = server.dataRequests();
        expect(data[0]).toMatchObject({dropped: true, bytesSent: 300_000});
        expect(data.length).toBeGreaterThanOrEqual(2);
        expect(data[1]!.range).toMatch(/^bytes=[1-9]\d*-$/); // the retry is a Range request from where the drop left off
        expect(data[1]!.dropped).toBe(false);
        expect(await sha256File(result.path)).toBe(modelSha256);
    });

    test("a cancelled download keeps what it got and the next one resumes past it, fetching only the missing bytes", async () => {
        const dir = tempDir();
        const downloader = new ModelDownloader({fetcher: loopbackFetcher, dir});
        const {partPath, statePath, finalPath} = downloader.pathsFor("big.gguf");
        // First attempt: the bytes trickle, and we cancel once 1 MiB is on disk.
        server.options.writeDelayMs = 40;
        const controller = new AbortController();
        const watcher = setInterval(() => {
            if ((fs.statSync(partPath, {throwIfNoEntry: false})?.size ?? 0) >= 1024 * 1024)
                controller.abort();
        }, 20);
        const first = await downloader.download({url: server.url("big.gguf"), sha256: sha256(big), signal: controller.signal}).catch((error: unknown) => error);
        clearInterval(watcher);

        expect(first).toMatchObject({code: "DOWNLOAD_CANCELLED"});
        const keptBytes = (first as {details: {keptBytes: number}}).details.keptBytes;
        expect(keptBytes).toBeGreaterThanOrEqual(1024 * 1024);
        expect(fs.statSync(partPath).size).toBe(keptBytes); // kept for the resume
        expect(fs.existsSync(statePath)).toBe(true);
        expect(fs.existsSync(finalPath)).toBe(false);
        const firstAttemptBytes = server.dataRequests().reduce((sum, request) => sum + request.bytesSent, 0);

        server.resetLog();
        server.options.writeDelayMs = 0;
        const second = await downloader.download({url: server.url("big.gguf"), sha256: sha256(big), expectedBytes: big.length});

        const resumed = server.dataRequests();
        expect(second.resumedFromBytes).toBe(keptBytes);
        expect(resumed.map((request) => request.range)).toEqual([`bytes=${keptBytes}-`]); // nothing before the kept bytes again
        expect(second.transferredBytes).toBe(big.length - keptBytes);
        expect(resumed[0]!.bytesSent).toBe(big.length - keptBytes);
        expect(second.sha256).toBe(sha256(big));
        expect(fs.readdirSync(dir)).toEqual(["big.gguf"]);
        console.info(`resume: first attempt got ${firstAttemptBytes} bytes before the cancel; ` +
            `the resume fetched ${resumed[0]!.bytesSent} of ${big.length} (resumed from ${second.resumedFromBytes})`);
    });

    test("a wrong SHA-256 is refused and the bad file is deleted, not offered", async () => {
        const dir = tempDir();
        const wrong = "0".repeat(64);
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf"), sha256: wrong}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DOWNLOAD_CHECKSUM_MISMATCH", details: {expectedSha256: wrong, actualSha256: modelSha256}});
        expect((error as Error).message).toContain("deleted");
        expect(fs.readdirSync(dir)).toEqual([]);
    });

    test.each([500, 404])("an HTTP %i is reported at once, clearly: asked once, never retried", async (status) => {
        const dir = tempDir();
        server.options.forceStatus = status;
        server.resetLog();
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DOWNLOAD_FAILED", details: {status}});
        expect((error as Error).message).toContain(`HTTP ${status}`);
        // node-llama-cpp alone would retry a 5xx for minutes; how long the answer takes is the bench's (npm run bench: "download refused").
        expect(server.requests).toHaveLength(1);
        expect(fs.readdirSync(dir)).toEqual([]);
    });

    test("a missing file on a working server is a clear 404", async () => {
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir: tempDir()}).download({url: server.url("nope.gguf")}).catch((caught: unknown) => caught);
        expect(error).toMatchObject({code: "DOWNLOAD_FAILED", details: {status: 404}});
        expect((error as Error).message).toMatch(/HTTP 404.*no file there/);
    });

    test("a server offering a different size than expected is refused before any transfer", async () => {
        const dir = tempDir();
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf"), expectedBytes: model.length + 1}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DOWNLOAD_SIZE_MISMATCH", details: {remoteBytes: model.length, expectedBytes: model.length + 1}});
        expect(server.dataRequests()).toEqual([]);
        expect(fs.readdirSync(dir)).toEqual([]);
    });

    test("a disk without room refuses the download before it starts, saying by how much", async () => {
        const dir = tempDir();
        const downloader = new ModelDownloader({fetcher: loopbackFetcher, dir, diskReserveBytes: 1000, diskFreeBytes: async () => 500_000});
        const error = await downloader.download({url: server.url("stories260K.gguf")}).catch((caught: unknown) => caught);

        expect(error).toMatchObject({code: "DISK_FULL", details: {phase: "before", neededBytes: model.length + 1000, freeBytes: 500_000, shortBytes: model.length + 1000 - 500_000}});
        expect((error as Error).message).toMatch(/Not enough disk space.*short/);
        expect(server.dataRequests()).toEqual([]);
        // The real check reads the disk's free space through fs.statfs.
        const real = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf")});
        expect(real.fileBytes).toBe(model.length);
    });

    test("a verified file already in place is reused; a different file under the same name is never overwritten", async () => {
        const dir = tempDir();
        fs.copyFileSync(modelPath!, path.join(dir, "stories260K.gguf"));
        const reused = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf"), sha256: modelSha256});
        expect(reused).toMatchObject({alreadyPresent: true, sha256: modelSha256, transferredBytes: 0});
        expect(server.requests).toEqual([]);

        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("stories260K.gguf"), sha256: sha256(big)}).catch((caught: unknown) => caught);
        expect(error).toMatchObject({code: "DOWNLOAD_FAILED"});
        expect(await sha256File(path.join(dir, "stories260K.gguf"))).toBe(modelSha256);
    });

    test("a file that is not GGUF is refused after the transfer and deleted", async () => {
        const dir = tempDir();
        server.options.files["notes.gguf"] = Buffer.from("this is not a model\n".repeat(100));
        const error = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("notes.gguf")}).catch((caught: unknown) => caught);
        delete server.options.files["notes.gguf"];
        expect(error).toMatchObject({code: "MODEL_NOT_GGUF"});
        expect(fs.readdirSync(dir)).toEqual([]);
    });

    test("throughput from the local server (64 MiB)", async () => {
        const dir = tempDir();
        const result = await new ModelDownloader({fetcher: loopbackFetcher, dir}).download({url: server.url("huge.gguf"), sha256: sha256(huge)});
        const mbPerSecond = result.transferredBytes / result.transferSeconds / 1e6;
        console.info(`throughput: ${huge.length} bytes in ${result.transferSeconds.toFixed(2)} s = ${mbPerSecond.toFixed(0)} MB/s; ` +
            `SHA-256 check ${result.verifySeconds.toFixed(2)} s (${(huge.length / result.verifySeconds / 1e6).toFixed(0)} MB/s)`);
        expect(result.sha256).toBe(sha256(huge));
        expect(mbPerSecond).toBeGreaterThan(5);
    });
});

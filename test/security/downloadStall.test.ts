import fs from "node:fs";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import type {DownloadProgressEvent} from "../../src/core/common/api/index.js";
import {DownloadStalledError} from "../../src/core/node/models/DownloadStalledError.js";
import {ModelDownloader, partialSuffix, sha256File} from "../../src/core/node/models/ModelDownloader.js";
import {ModelLibrary} from "../../src/core/node/models/ModelLibrary.js";
import {testModelSha256} from "../helpers/fakeAppHome.js";
import {loopbackFetcher, RangeServer} from "../helpers/rangeServer.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
/** Short, so that the test is quick; the product's default is 60 s. */
const stallTimeoutMs = 400;
const stallAfterBytes = 64 * 1024;
/** Only a hang guard: a stall must end at the timeout, long before this. */
const hangGuardMs = 30_000;

/**
 * A server on 127.0.0.1 that sends the first 64 KiB of the model, then nothing more while it
 * keeps the connection open. The download must end at the stall timeout with a clear
 * `DOWNLOAD_STALLED` (bytes received, the timeout), keep the bytes (the disk is not the problem),
 * stop reporting `running`, and the next attempt must resume from the kept bytes.
 */
describe.skipIf(modelPath == null)("a download from a server that stalls", () => {
    let server: RangeServer;
    let model: Buffer;
    let stalls = 0;
    let stalling = true;

    beforeAll(async () => {
        model = fs.readFileSync(modelPath!);
        server = await RangeServer.start({
            files: {"stories260K.gguf": model},
            stallAfter: () => (stalling ? stallAfterBytes : null)
        });
    });
    afterEach(() => {
        stalling = true;
        server.options.dataResponse = undefined;
        server.resetLog();
    });
    afterAll(async () => {
        await server?.close();
        console.info(`[download stall] ${stalls} stalls detected at the ${stallTimeoutMs} ms stall timeout (the default is 60 s), ` +
            "each a DOWNLOAD_STALLED with the bytes kept");
    });

    test("ends with DOWNLOAD_STALLED at the stall timeout, keeps the 64 KiB, and the retry resumes from them", async () => {
        const dir = tempDir("stall");
        const downloader = new ModelDownloader({dir, stallTimeoutMs, fetcher: loopbackFetcher});
        const url = server.url("stories260K.gguf");

        const error = await downloader.download({url, sha256: testModelSha256}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(DownloadStalledError);
        expect(error).toMatchObject({
            code: "DOWNLOAD_STALLED",
            details: {receivedBytes: stallAfterBytes, totalBytes: model.length, stallTimeoutMs, keptBytes: stallAfterBytes, resumable: true}
        });
        expect((error as Error).message).toBe(`The download stalled: nothing arrived for ${stallTimeoutMs} ms after ${stallAfterBytes} of ${model.length} bytes. ` +
            `The ${stallAfterBytes} bytes received are kept; run the same download again to resume from there.`);
        stalls++;
        expect(server.dataRequests()).toMatchObject([{stalled: true, bytesSent: stallAfterBytes}]);
        expect(fs.statSync(path.join(dir, `stories260K.gguf${partialSuffix}`)).size).toBe(stallAfterBytes);

        stalling = false;
        server.resetLog();
        const result = await downloader.download({url, sha256: testModelSha256});
        expect(result).toMatchObject({resumedFromBytes: stallAfterBytes, transferredBytes: model.length - stallAfterBytes, sha256Checked: true});
        expect(server.dataRequests().map((request) => request.range)).toEqual([`bytes=${stallAfterBytes}-`]);
        expect(await sha256File(result.path)).toBe(testModelSha256);
    }, hangGuardMs);

    test("a server that cannot resume: DOWNLOAD_STALLED says the next attempt starts over", async () => {
        server.options.dataResponse = "sizeless";
        const dir = tempDir("stall-sizeless");
        const error = await new ModelDownloader({dir, stallTimeoutMs, fetcher: loopbackFetcher})
            .download({url: server.url("stories260K.gguf")}).catch((caught: unknown) => caught);
        expect(error).toMatchObject({code: "DOWNLOAD_STALLED", details: {receivedBytes: stallAfterBytes, totalBytes: null, keptBytes: 0, resumable: false}});
        expect((error as Error).message).toMatch(/The server does not resume downloads: the next attempt starts over\.$/);
        stalls++;
    }, hangGuardMs);

    test("the app's download (models.download): progress stops being `running` at the timeout, ends failed with DOWNLOAD_STALLED; the retry is done", async () => {
        const dir = tempDir("stall-app");
        const events: DownloadProgressEvent[] = [];
        const library = new ModelLibrary({dir, downloader: {progressIntervalMs: 0, stallTimeoutMs, fetcher: loopbackFetcher}}, (event) => events.push(event));
        const finished = async (id: string) => {
            await expect.poll(() => events.filter((event) => event.id === id).at(-1)?.state, {timeout: hangGuardMs}).toMatch(/^(done|failed|cancelled)$/);
            return events.filter((event) => event.id === id);
        };

        const stalled = await finished(library.startDownload({url: server.url("stories260K.gguf"), sha256: testModelSha256}));
        expect(stalled.at(-1)).toMatchObject({state: "failed", bytes: stallAfterBytes, bytesPerSecond: 0,
            error: {code: "DOWNLOAD_STALLED", details: {receivedBytes: stallAfterBytes, stallTimeoutMs, keptBytes: stallAfterBytes}}});
        // Every `running` report came while bytes were still arriving; none after the last byte.
        const running = stalled.filter((event) => event.state === "running");
        expect(running.every((event) => event.bytes <= stallAfterBytes)).toBe(true);
        expect(running.filter((event) => event.bytes === stallAfterBytes).length).toBeLessThanOrEqual(1);
        expect((await library.list(null)).downloads).toEqual([]);
        stalls++;

        stalling = false;
        const retried = await finished(library.startDownload({url: server.url("stories260K.gguf"), sha256: testModelSha256}));
        expect(retried.at(-1)).toMatchObject({state: "done", error: null, bytes: model.length});
        expect(server.dataRequests().at(-1)!.range).toBe(`bytes=${stallAfterBytes}-`);
    }, hangGuardMs * 2);
});

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import type {DownloadProgressEvent} from "../../src/core/common/api/index.js";
import {ModelLibrary} from "../../src/core/node/models/ModelLibrary.js";
import {loopbackFetcher, RangeServer} from "../helpers/rangeServer.js";
import {runModelsCli as cli} from "../helpers/runModelsCli.js";
import {setEnvForTest} from "../helpers/setEnvForTest.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

/**
 * A download that passes the transfer checks (size as announced, "GGUF" at the start) but is not a
 * usable model is deleted, never left in the models folder, so that the next try starts clean
 * instead of saying "already exists and is not known to be this model".
 */
describe.skipIf(modelPath == null)("a downloaded file that fails validation is deleted, and a retry works", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bad-download-"));
    let restoreHome = () => undefined as void;
    let server: RangeServer;
    let model: Buffer;

    const bad: Record<string, {code: string, serve: (srv: RangeServer) => void}> = {
        "a truncated GGUF (the header and half the tensors)": {
            code: "MODEL_TRUNCATED",
            serve: (srv) => void (srv.options.files["model.gguf"] = model.subarray(0, Math.floor(model.length / 2)))
        },
        "\"GGUF\" then junk": {
            code: "MODEL_NOT_GGUF",
            serve: (srv) => void (srv.options.files["model.gguf"] = Buffer.concat([Buffer.from("GGUF"), crypto.randomBytes(64 * 1024)]))
        },
        "what a redirect to another URL returned (a GGUF v3 header claiming more entries than the file holds)": {
            code: "MODEL_TRUNCATED",
            serve: (srv) => {
                srv.options.files["elsewhere.gguf"] = Buffer.concat([Buffer.from("GGUF\x03\x00\x00\x00"), Buffer.alloc(4096, 0xff)]);
                srv.options.redirects = {"model.gguf": "elsewhere.gguf"};
            }
        }
    };
    const fixServer = () => {
        server.options.files["model.gguf"] = model;
        delete server.options.redirects;
    };

    beforeAll(async () => {
        restoreHome = setEnvForTest("CLEANROOM_HOME", path.join(root, "home"));
        model = fs.readFileSync(modelPath!);
        server = await RangeServer.start({files: {}});
    });
    afterEach(() => {
        server.options = {files: {}};
        process.exitCode = undefined;
    });
    afterAll(async () => {
        await server?.close();
        restoreHome();
        fs.rmSync(root, {recursive: true, force: true});
    });

    test.each(Object.entries(bad))("models download: %s is refused and deleted; the retry downloads the real model", async (_name, {code, serve}) => {
        const dir = fs.mkdtempSync(path.join(root, "cli-"));
        serve(server);
        const refused = await cli("download", server.url("model.gguf"), "--allow-loopback", "--dir", dir, "--json");
        expect(refused.exitCode).toBe(1);
        expect(refused.jsonError().error.code).toBe(code);
        expect(fs.readdirSync(dir)).toEqual([]);
        expect(refused.jsonError().error.message).toMatch(/It was deleted; nothing was kept in the models folder\./);

        fixServer();
        const retried = await cli("download", server.url("model.gguf"), "--allow-loopback", "--dir", dir, "--json");
        expect(retried.stderr).toBe("");
        expect(retried.exitCode).toBe(0);
        expect(JSON.parse(retried.stdout)).toMatchObject({download: {alreadyPresent: false, fileBytes: model.length}, model: {path: path.join(dir, "model.gguf")}});
        expect(fs.readdirSync(dir).sort()).toEqual(["model.gguf"]);
    });

    test.each(Object.entries(bad))("the app's download (models.download): %s ends failed and deleted; the retry is done", async (_name, {code, serve}) => {
        const dir = fs.mkdtempSync(path.join(root, "app-"));
        const events: DownloadProgressEvent[] = [];
        const library = new ModelLibrary({dir, downloader: {progressIntervalMs: 0, fetcher: loopbackFetcher}}, (event) => events.push(event));
        const finished = async (id: string) => {
            await expect.poll(() => events.filter((event) => event.id === id).at(-1)?.state, {timeout: 60_000}).toMatch(/^(done|failed|cancelled)$/);
            return events.filter((event) => event.id === id).at(-1)!;
        };

        serve(server);
        const failed = await finished(library.startDownload({url: server.url("model.gguf")}));
        expect(failed).toMatchObject({state: "failed", error: {code}});
        expect(fs.readdirSync(dir).filter((name) => name !== "registry.json")).toEqual([]);
        expect(library.registry.list()).toEqual([]);

        fixServer();
        const done = await finished(library.startDownload({url: server.url("model.gguf")}));
        expect(done).toMatchObject({state: "done", error: null});
        expect(library.registry.list()).toEqual([expect.objectContaining({path: path.join(dir, "model.gguf"), origin: "download"})]);
    });
});

import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ApiEventPayload, ApiMethod} from "../../src/core/common/api/index.js";
import {connectCoreClient, createInProcessChannelPair, RemoteCallError, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {buildFakeAppHome, testModelSha256} from "../helpers/fakeAppHome.js";
import {loopbackFetcher, RangeServer} from "../helpers/rangeServer.js";
import {tempDir} from "../helpers/tempCore.js";
import {testCatalogEntry, testModelBytes, writeTestCatalog} from "../helpers/testCatalog.js";
import {requireTestModel} from "../helpers/testModel.js";

type Progress = ApiEventPayload<"models.downloadProgress">;

const modelPath = requireTestModel();

/**
 * The `models.*` calls through the in-process transport (structured clone, as over a
 * MessagePort): the contract refuses bad input, downloads report progress in order and end
 * verified and registered, a bad checksum or a full disk is refused, and Make default loads the model.
 */
describe.skipIf(modelPath == null)("models.* calls over the in-process transport", () => {
    let core: Core;
    let service: CoreService;
    let client: ConnectedCoreClient;
    let closeChannel: () => void;
    let server: RangeServer;
    let modelsDir: string;
    let appsHome: string;
    const progress: Progress[] = [];

    /** Starts a download and resolves with its events once it ends (done, failed or cancelled). */
    async function download(input: Parameters<ConnectedCoreClient["call"]>[1], onRunning?: (id: string) => void): Promise<Progress[]> {
        const {id} = await client.call("models.download", input as never) as {id: string};
        onRunning?.(id);
        await expect.poll(() => progress.some((event) => event.id === id && ["done", "failed", "cancelled"].includes(event.state)), {timeout: 60_000}).toBe(true);
        return progress.filter((event) => event.id === id);
    }

    async function expectRefused(method: ApiMethod, input: unknown, code = "INVALID_INPUT") {
        const before = fs.readdirSync(modelsDir).sort();
        const result = await service.call(method, input);
        expect(result.ok, `${method} ${JSON.stringify(input)} should be refused`).toBe(false);
        if (!result.ok)
            expect(result.error.code).toBe(code);
        expect(fs.readdirSync(modelsDir).sort()).toEqual(before);
    }

    beforeAll(async () => {
        const dir = tempDir("models-rpc");
        modelsDir = path.join(dir, "models");
        fs.mkdirSync(modelsDir);
        appsHome = buildFakeAppHome(path.join(dir, "home"), modelPath!, "linux").home;
        const model = fs.readFileSync(modelPath!);
        server = await RangeServer.start({files: {"stories260K.gguf": model, "slow.gguf": model}, writeBytes: 64 * 1024, writeDelayMs: 20});
        const catalogPath = writeTestCatalog(path.join(dir, "catalog"), [
            testCatalogEntry({id: "stories-260k", name: "Stories 260K", url: server.url("stories260K.gguf"), fileName: "stories260K.gguf"}),
            testCatalogEntry({id: "stories-bad-checksum", name: "Stories (bad checksum)", url: server.url("stories260K.gguf"), fileName: "bad.gguf", sha256: "0".repeat(64)}),
            testCatalogEntry({id: "stories-missing", name: "Stories (missing)", url: server.url("absent.gguf"), fileName: "absent.gguf"})
        ]);

        core = Core.create(await loadLlama(), {database: path.join(dir, "core.db"), engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}}});
        service = createCoreService(core, {models: {dir: modelsDir, catalogPath, appsHome, downloader: {progressIntervalMs: 0, fetcher: loopbackFetcher}}});
        const [coreSide, clientSide, close] = createInProcessChannelPair();
        serveCoreOverChannel(service, coreSide);
        client = connectCoreClient(clientSide);
        closeChannel = close;
        client.subscribe("models.downloadProgress", (event) => progress.push(event));
    });

    afterAll(async () => {
        closeChannel?.();
        service?.dispose();
        await core?.dispose();
        await server?.close();
    });

    it("refuses malformed input with INVALID_INPUT and touches nothing", async () => {
        await expectRefused("models.list", {all: true});
        await expectRefused("models.download", {});
        await expectRefused("models.download", {catalogId: "stories-260k", url: server.url("stories260K.gguf")});
        await expectRefused("models.download", {catalogId: "Stories 260K"});
        await expectRefused("models.download", {url: "ftp://127.0.0.1/model.gguf"});
        await expectRefused("models.download", {url: "file:///etc/passwd"});
        await expectRefused("models.download", {url: server.url("stories260K.gguf"), sha256: "abc"});
        await expectRefused("models.download", {catalogId: "stories-260k", sha256: testModelSha256});
        await expectRefused("models.download", {catalogId: "stories-260k", extra: 1});
        await expectRefused("models.cancelDownload", {id: "not-an-id"});
        await expectRefused("models.import", {path: ""});
        await expectRefused("models.import", {path: modelPath, name: "   "});
        await expectRefused("models.import", {path: "models/stories260K.gguf"});
        await expectRefused("models.detect", {paths: "/tmp/x.gguf"});
        await expectRefused("models.detect", {add: "yes"});
        await expectRefused("models.setDefault", {id: "../etc/passwd"});
        await expectRefused("models.setDefault", {});
        expect(progress).toEqual([]);
    });

    it("lists the catalog with a fit for this machine, and nothing installed yet", async () => {
        const library = await client.call("models.list", {});
        expect(library.modelsDir).toBe(modelsDir);
        expect(library.installed).toEqual([]);
        expect(library.defaultModelId).toBeNull();
        expect(library.catalog.map((entry) => entry.id)).toEqual(["stories-260k", "stories-bad-checksum", "stories-missing"]);
        const stories = library.catalog[0]!;
        expect(stories).toMatchObject({installedAs: null, fileBytes: testModelBytes, license: "MIT"});
        expect(stories.fit).toMatchObject({basis: "catalog", fitsRam: true, maxContextSize: 2048});
        expect(stories.fit.ramNeededBytes).toBeGreaterThan(testModelBytes);
    });

    it("downloads a catalog model: progress events in order, verifying, then done and registered", async () => {
        const events = await download({catalogId: "stories-260k"});
        const states = events.map((event) => event.state);
        expect(states[0]).toBe("running");
        expect(states.at(-1)).toBe("done");
        // running… then verifying… then done: never back to an earlier state.
        const order = ["running", "verifying", "done"];
        expect(states.every((state, index) => index === 0 || order.indexOf(state) >= order.indexOf(states[index - 1]!))).toBe(true);
        expect(states).toContain("verifying");
        const running = events.filter((event) => event.state === "running");
        expect(running.length).toBeGreaterThan(3);
        expect(running.every((event, index) => index === 0 || event.bytes >= running[index - 1]!.bytes)).toBe(true);
        expect(running.some((event) => event.bytes > 0 && event.bytes < testModelBytes)).toBe(true);
        expect(running.at(-1)).toMatchObject({bytes: testModelBytes, total: testModelBytes});
        const done = events.at(-1)!;
        expect(done).toMatchObject({bytes: testModelBytes, total: testModelBytes, error: null, catalogId: "stories-260k", modelId: "stories-260k"});

        const library = await client.call("models.list", {});
        expect(library.downloads).toEqual([]);
        expect(library.installed).toHaveLength(1);
        expect(library.installed[0]).toMatchObject({
            id: "stories-260k", origin: "download", sha256: testModelSha256, fileBytes: testModelBytes, present: true,
            isDefault: false, isLoaded: false, path: path.join(modelsDir, "stories260K.gguf")
        });
        expect(library.installed[0]!.fit).toMatchObject({basis: "gguf", fitsRam: true});
        expect(library.catalog[0]).toMatchObject({installedAs: "stories-260k", fit: {basis: "gguf"}});
        expect(fs.readdirSync(modelsDir).sort()).toEqual(["registry.json", "stories260K.gguf"]);
    });

    it("refuses a file whose SHA-256 does not match: failed with DOWNLOAD_CHECKSUM_MISMATCH, deleted, not registered", async () => {
        const events = await download({catalogId: "stories-bad-checksum"});
        expect(events.at(-1)).toMatchObject({state: "failed", modelId: null, error: {code: "DOWNLOAD_CHECKSUM_MISMATCH"}});
        expect(events.at(-1)!.error!.message).toContain(testModelSha256);
        expect(fs.readdirSync(modelsDir).filter((name) => name.startsWith("bad.gguf"))).toEqual([]);
        expect((await client.call("models.list", {})).installed.map((model) => model.id)).toEqual(["stories-260k"]);
    });

    it("reports a server error as failed with the HTTP status, and an unknown catalog id at once", async () => {
        const events = await download({catalogId: "stories-missing"});
        expect(events.at(-1)).toMatchObject({state: "failed", error: {code: "DOWNLOAD_FAILED"}});
        expect(events.at(-1)!.error!.message).toContain("HTTP 404");
        await expect(client.call("models.download", {catalogId: "no-such-model"})).rejects.toMatchObject({code: "MODEL_NOT_FOUND"});
    });

    it("refuses a download the disk has no room for, before any byte is transferred", async () => {
        const full = createCoreService(core, {models: {dir: tempDir("full-disk"), catalogPath: path.join(path.dirname(modelsDir), "catalog", "catalog.json"),
            downloader: {diskFreeBytes: async () => 100_000, diskReserveBytes: 0, fetcher: loopbackFetcher}}});
        const seen: Progress[] = [];
        full.events.on("models.downloadProgress", (event) => seen.push(event));
        server.resetLog();
        try {
            const started = await full.call("models.download", {url: server.url("stories260K.gguf")});
            expect(started.ok).toBe(true);
            await expect.poll(() => seen.at(-1)?.state).toBe("failed");
            expect(seen.at(-1)!.error).toMatchObject({code: "DISK_FULL", details: {phase: "before"}});
            expect(server.dataRequests()).toEqual([]);
        } finally {
            full.dispose();
        }
    });

    it("cancels a running download: cancelled, and the id is no longer running", async () => {
        server.options.writeDelayMs = 200;
        let downloadId = "";
        const events = await download({url: server.url("slow.gguf"), sha256: testModelSha256.toUpperCase()}, (id) => {
            downloadId = id;
            void expect.poll(() => progress.some((event) => event.id === id && event.bytes > 0)).toBe(true)
                .then(() => client.call("models.cancelDownload", {id}));
        });
        server.options.writeDelayMs = 20;
        expect(events.at(-1)).toMatchObject({state: "cancelled", error: {code: "DOWNLOAD_CANCELLED"}});
        expect(await client.call("models.cancelDownload", {id: downloadId})).toEqual({cancelled: false});
        expect((await client.call("models.list", {})).downloads).toEqual([]);
    });

    it("imports a GGUF in place by absolute path, and refuses a missing file or a relative path", async () => {
        const copy = path.join(tempDir("import"), "my model.gguf");
        fs.copyFileSync(modelPath!, copy);
        const imported = await client.call("models.import", {path: copy, name: "My model"});
        expect(imported).toMatchObject({path: copy, origin: "import", name: "My model", fileBytes: testModelBytes});
        await expect(client.call("models.import", {path: path.join(path.dirname(copy), "absent.gguf")})).rejects.toMatchObject({code: "MODEL_NOT_FOUND"});
        await expect(client.call("models.import", {path: "relative.gguf"})).rejects.toMatchObject({code: "INVALID_INPUT"});
        expect(fs.existsSync(path.join(modelsDir, "my model.gguf"))).toBe(false); // used in place, not copied
    });

    it("detects other apps' models and registers only the one asked for", async () => {
        const found = await client.call("models.detect", {});
        const ollama = found.models.find((model) => model.app === "ollama")!;
        expect(ollama).toMatchObject({names: ["stories:260k", "stories:latest"], registeredAs: null});
        expect(found.added).toEqual([]);

        const added = await client.call("models.detect", {add: true, paths: [ollama.path, path.join(appsHome, "elsewhere.gguf")]});
        expect(added.added).toHaveLength(1);
        expect(added.added[0]).toMatchObject({origin: "ollama", name: "stories:260k", path: ollama.path});
        expect(added.rejected).toEqual([expect.objectContaining({path: path.join(appsHome, "elsewhere.gguf"), error: expect.objectContaining({code: "MODEL_NOT_FOUND"})})]);
        expect(added.models.find((model) => model.path === ollama.path)!.registeredAs).toBe(added.added[0]!.id);
        expect(added.models.filter((model) => model.registeredAs != null)).toHaveLength(1);
    });

    it("setDefault loads the model through model.load's path, then makes it the default", async () => {
        await expect(client.call("models.setDefault", {id: "no-such-model"})).rejects.toMatchObject({code: "MODEL_NOT_FOUND"});
        const statuses: string[] = [];
        const stop = client.subscribe("core.status", (status) => statuses.push(status.model?.state ?? "?"));
        const result = await client.call("models.setDefault", {id: "stories-260k"});
        stop();
        expect(result.defaultModelId).toBe("stories-260k");
        expect(result.status).toMatchObject({state: "ready", path: path.join(modelsDir, "stories260K.gguf")});
        expect(statuses).toContain("loading");
        expect((await client.call("settings.get", {})).modelPath).toBe(path.join(modelsDir, "stories260K.gguf"));
        const library = await client.call("models.list", {});
        expect(library.defaultModelId).toBe("stories-260k");
        expect(library.installed.find((model) => model.id === "stories-260k")).toMatchObject({isDefault: true, isLoaded: true});
        expect(library.installed.filter((model) => model.isDefault)).toHaveLength(1);
    });

    it("a model that cannot load is never made the default", async () => {
        const broken = path.join(tempDir("broken"), "broken.gguf");
        fs.copyFileSync(modelPath!, broken);
        const imported = await client.call("models.import", {path: broken});
        fs.truncateSync(broken, 1000);
        const result = await client.call("models.setDefault", {id: imported.id});
        expect(result.status.state).toBe("error");
        expect(result.defaultModelId).toBe("stories-260k");
        await client.call("models.setDefault", {id: "stories-260k"});
    });

    it("answers MODELS_UNAVAILABLE when the core was given no models folder", async () => {
        const bare = createCoreService(core);
        try {
            const result = await bare.call("models.list", {});
            expect(result).toMatchObject({ok: false, error: {code: "MODELS_UNAVAILABLE"}});
            expect(await bare.call("models.download", {url: "https://127.0.0.1:9/x.gguf"})).toMatchObject({ok: false, error: {code: "MODELS_UNAVAILABLE"}});
        } finally {
            bare.dispose();
        }
    });

    it("errors cross the transport as RemoteCallError", async () => {
        const error = await client.call("models.setDefault", {id: "no-such-model"}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(RemoteCallError);
    });
});

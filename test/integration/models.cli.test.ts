import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, test} from "vitest";
import {ModelRegistry} from "../../src/core/node/models/ModelRegistry.js";
import {buildFakeAppHome, testModelSha256} from "../helpers/fakeAppHome.js";
import {RangeServer} from "../helpers/rangeServer.js";
import {runModelsCli as cli} from "../helpers/runModelsCli.js";
import {setEnvForTest} from "../helpers/setEnvForTest.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("cleanroom models (CLI)", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-cli-"));
    const modelsDir = path.join(root, "cleanroom-home", "models");
    let server: RangeServer;
    let restoreHome = () => undefined as void;

    beforeAll(async () => {
        restoreHome = setEnvForTest("CLEANROOM_HOME", path.join(root, "cleanroom-home"));
        server = await RangeServer.start({files: {"stories260K.gguf": fs.readFileSync(modelPath!)}});
    });
    afterEach(() => {
        process.exitCode = undefined;
    });
    afterAll(async () => {
        await server?.close();
        restoreHome();
        fs.rmSync(root, {recursive: true, force: true});
    });

    test("import validates a GGUF, registers it in place (no copy) and makes the first model the default", async () => {
        const result = await cli("import", modelPath!, "--json");
        expect(result.exitCode).toBe(0);
        const {model, fit, isDefault} = result.json();
        expect(model).toMatchObject({id: "stories260k", path: modelPath, origin: "import", fileBytes: 1_185_376, architecture: "llama"});
        expect(isDefault).toBe(true);
        expect(fit).toMatchObject({basis: "gguf", fitsRam: true});
        expect(fs.readdirSync(modelsDir)).toEqual(["registry.json"]); // the file was not copied
        expect(ModelRegistry.open(modelsDir).defaultModel()?.path).toBe(modelPath);
    });

    test("import refuses a file that is not GGUF, with a JSON error and exit code 1", async () => {
        const notModel = path.join(root, "notes.gguf");
        fs.writeFileSync(notModel, "hello");
        const result = await cli("import", notModel, "--json");
        expect(result.exitCode).toBe(1);
        expect(result.stdout).toBe("");
        expect(result.jsonError().error.code).toBe("MODEL_NOT_GGUF");

        const plain = await cli("import", notModel);
        expect(plain.exitCode).toBe(1);
        expect(plain.stderr).toMatch(/^cleanroom: Not a GGUF model .* \[MODEL_NOT_GGUF\]\n$/);
    });

    test("download of a URL with --sha256 and --dir verifies, registers and reports progress lines", async () => {
        const dir = path.join(root, "downloads");
        const result = await cli("download", server.url("stories260K.gguf"), "--allow-loopback", "--sha256", testModelSha256, "--dir", dir);
        expect(result.exitCode).toBe(0);
        expect(result.stderr).toMatch(/Downloading \[#+\] 100%/);
        expect(result.stderr).toMatch(/Verifying/);
        expect(result.stdout).toMatch(/SHA-256 270cba1b\w+ \(matches\)/);
        const registered = ModelRegistry.open(modelsDir).resolve(path.join(dir, "stories260K.gguf"));
        expect(registered).toMatchObject({origin: "download", sha256: testModelSha256, sourceRef: server.url("stories260K.gguf")});
    });

    test("download errors: a wrong checksum, a server error and an unknown name each exit 1 with a clear code", async () => {
        const wrong = await cli("download", server.url("stories260K.gguf"), "--allow-loopback", "--sha256", "f".repeat(64), "--dir", path.join(root, "bad"), "--json");
        expect(wrong.exitCode).toBe(1);
        expect(wrong.jsonError().error.code).toBe("DOWNLOAD_CHECKSUM_MISMATCH");
        expect(fs.readdirSync(path.join(root, "bad"))).toEqual([]);

        const missing = await cli("download", server.url("missing.gguf"), "--allow-loopback", "--dir", path.join(root, "bad"), "--json");
        expect(missing.jsonError().error).toMatchObject({code: "DOWNLOAD_FAILED", message: expect.stringContaining("HTTP 404")});

        const unknown = await cli("download", "no-such-model", "--json");
        expect(unknown.jsonError().error.code).toBe("INVALID_INPUT");
    });

    test("detect --home finds other apps' models; --add registers them in place", async () => {
        const fake = buildFakeAppHome(path.join(root, "fake-home"), modelPath!, process.platform === "win32" ? "win32" : process.platform === "darwin" ? "darwin" : "linux");
        const result = await cli("detect", "--home", fake.home, "--add", "--json");
        expect(result.exitCode).toBe(0);
        const {models, added, rejected} = result.json();
        expect(models).toHaveLength(fake.expected.length);
        expect(added).toHaveLength(fake.expected.length);
        expect(rejected).toEqual([]);
        const registry = ModelRegistry.open(modelsDir);
        expect(registry.list().find((model) => model.origin === "ollama")).toMatchObject({sourceRef: "stories:260k, stories:latest"});
    });

    test("default shows and sets the model chat uses; list shows installed and catalog models with their fit", async () => {
        const registry = ModelRegistry.open(modelsDir);
        const ollama = registry.list().find((model) => model.origin === "ollama")!;
        expect((await cli("default", ollama.id, "--json")).json().defaultModel.id).toBe(ollama.id);
        expect(registry.defaultModel()?.id).toBe(ollama.id);
        expect((await cli("default")).stdout).toContain(ollama.id);

        const missing = await cli("default", "llama-3.2-1b-instruct-q4_k_m", "--json");
        expect(missing.jsonError().error.message).toMatch(/not downloaded yet/);

        const list = (await cli("list", "--json")).json();
        expect(list.defaultModel).toBe(ollama.id);
        expect(list.installed.length).toBeGreaterThanOrEqual(3);
        expect(list.installed.every((model: {fit: {basis: string} | null}) => model.fit?.basis === "gguf")).toBe(true);
        expect(list.catalog.map((entry: {id: string, purpose: string}) => [entry.id, entry.purpose])).toEqual([
            ["llama-3.2-1b-instruct-q4_k_m", "chat"], ["llama-3.2-3b-instruct-q4_k_m", "chat"], ["qwen2.5-7b-instruct-q4_k_m", "chat"],
            ["bge-small-en-v1.5-q8_0", "embedding"]
        ]);
        expect(list.catalog.every((entry: {fit: {basis: string}}) => entry.fit.basis === "catalog")).toBe(true);

        const text = (await cli("list")).stdout;
        expect(text).toMatch(/Installed \(\* the default\):[\s\S]*\* +stories/);
        expect(text).toMatch(/Catalog[\s\S]*qwen2\.5-7b-instruct-q4_k_m/);
        expect(text).toMatch(/bge-small-en-v1\.5-q8_0 +BGE Small EN v1\.5 \(embeddings\), for documents only/);

        expect((await cli("remove", ollama.id)).exitCode).toBe(0);
        expect(registry.defaultModel()).toBeNull();
        expect(fs.existsSync(ollama.path)).toBe(true); // the file itself is left alone
    });

    test("a damaged registry is reported, not overwritten", async () => {
        const registryPath = path.join(modelsDir, "registry.json");
        const saved = fs.readFileSync(registryPath, "utf8");
        fs.writeFileSync(registryPath, "{not json");
        const result = await cli("list", "--json");
        expect(result.jsonError().error.code).toBe("MODEL_REGISTRY_INVALID");
        expect(fs.readFileSync(registryPath, "utf8")).toBe("{not json");
        fs.writeFileSync(registryPath, saved);
    });
});

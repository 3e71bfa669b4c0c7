import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {ModelRegistry} from "../../src/core/node/models/ModelRegistry.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

/**
 * A registered default model whose file is gone (deleted, or its drive not mounted): the models
 * list says so with the remedies, in the table, in --json and over RPC; a local turn and the
 * self-test say which model and what to do; a cloud turn goes on without it.
 */
describe.skipIf(modelPath == null)("a registered model whose file is gone", () => {
    const {env, home, db} = hermeticCliEnv("missing-model");
    const modelsDir = path.join(home, "models");
    const drive = path.join(tempDir("missing-model-drive"), "usb");
    const onDrive = path.join(drive, "models", "stories.gguf");
    const deleted = path.join(path.dirname(db), "deleted.gguf");
    let sim: SharedCloudSimulator;

    beforeAll(async () => {
        fs.mkdirSync(path.dirname(onDrive), {recursive: true});
        fs.copyFileSync(modelPath!, onDrive);
        fs.copyFileSync(modelPath!, deleted);
        for (const file of [onDrive, deleted])
            expect((await runCliCapturing(["models", "import", file, "--json"], {env})).code).toBe(0);
        expect(ModelRegistry.open(modelsDir).defaultModel()?.path).toBe(onDrive);
        fs.rmSync(drive, {recursive: true}); // the drive is no longer mounted
        fs.rmSync(deleted);
        sim = await SharedCloudSimulator.start({mode: "honest", poolTokens: 4096});
    });
    afterAll(async () => {
        await sim?.close();
    });

    it("models list shows each missing file with its remedies, in the table and in --json", async () => {
        const json = await runCliCapturing(["models", "list", "--json"], {env});
        expect(json.code).toBe(0);
        const installed = (JSON.parse(json.stdout) as {installed: Array<Record<string, unknown>>}).installed;
        expect(installed).toEqual([
            expect.objectContaining({id: "stories", present: false, fit: null,
                missing: {reason: "folder-gone", missingFolder: drive, remedies: ["mount", "locate", "remove"]}}),
            expect.objectContaining({id: "deleted", present: false, fit: null,
                missing: {reason: "file-gone", missingFolder: null, remedies: ["locate", "remove"]}})
        ]);

        const table = await runCliCapturing(["models", "list"], {env});
        expect(table.code).toBe(0);
        expect(table.stdout).toMatch(/\* +stories .*MISSING: file not found/);
        expect(table.stdout).toContain(`stories: the folder ${drive} is not there (moved, or on a drive that is not mounted)`);
        expect(table.stdout).toContain(`mount the drive or restore the folder ${drive}`);
        expect(table.stdout).toContain("`cleanroom models import <file>`");
        expect(table.stdout).toContain("`cleanroom models remove stories`");
        expect(table.stdout).toContain("deleted: the file is not there (deleted or moved)");
    });

    it("the app's models.list carries the same state, and says it in words", async () => {
        const core = Core.create(await loadLlama(), {database: ":memory:"});
        const service = createCoreService(core, {models: {dir: modelsDir}});
        try {
            const result = await service.call("models.list", {});
            expect(result.ok).toBe(true);
            const [onMissingDrive, gone] = result.ok ? (result.value as {installed: Array<Record<string, unknown>>}).installed : [];
            expect(onMissingDrive).toMatchObject({present: false, missing: {reason: "folder-gone", missingFolder: drive}});
            expect(onMissingDrive!.problem).toMatch(/folder .* is not there .*connect the drive, or import the file from where it is now/);
            expect(gone).toMatchObject({present: false, missing: {reason: "file-gone"}});
        } finally {
            service.dispose();
            await core.dispose();
        }
    });

    it("a local chat and the self-test say which model is gone and what to do (MODEL_FILE_MISSING)", async () => {
        for (const args of [["chat", "--db", db, "--prompt", "Hello", "--json"], ["selftest", "--json"]]) {
            const run = await runCliCapturing(args, {env});
            expect(run.code, run.stderr).toBe(1);
            const {error} = JSON.parse(run.stderr) as {error: {code: string, message: string, details: Record<string, unknown>}};
            expect(error.code).toBe("MODEL_FILE_MISSING");
            expect(error.details).toMatchObject({id: "stories", path: onDrive, reason: "folder-gone"});
            expect(error.message).toContain(`The default model stories is registered at ${onDrive}`);
            expect(error.message).toContain("`cleanroom models remove stories`");
        }
    });

    it("chat --cloud needs no local model: the turn is answered, and the missing default is noted", async () => {
        const cloudEnv = {...env, CLEANROOM_CLOUD_API_KEY: "tenant-one"};
        const args = (prompt: string) => ["chat", "--cloud", "--endpoint", sim.url, "--cloud-model", sim.modelName, "--db", db, "--prompt", prompt, "--max-tokens", "16"];
        const json = await runCliCapturing([...args("What is the capital of France?"), "--json"], {env: cloudEnv});
        expect(json.code, json.stderr).toBe(0);
        expect(JSON.parse(json.stdout)).toMatchObject({route: "cloud", blocked: false});

        const plain = await runCliCapturing(args("Name three rivers in Spain."), {env: cloudEnv});
        expect(plain.code, plain.stderr).toBe(0);
        expect(plain.stderr).toMatch(/^Note: The default model stories is registered at .* This cloud turn goes on without a local model\.$/m);
    });
});

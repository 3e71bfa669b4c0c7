import {describe, expect, it} from "vitest";
import type {ApiOutput} from "../../src/core/common/api/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
/** The test model's trained context. */
const trained = 2048;
const notice = `The context size asked for (8192 tokens) is above what this model was trained with (${trained}): it was capped to ${trained}.`;

/** A context size above the model's trained context is capped, and the user is told: both numbers, in the CLI and in the app's model status. */
describe.skipIf(modelPath == null)("--context-size above the model's trained context", () => {
    const chat = (contextSize: number, json: boolean) => ["chat", "--model", modelPath!, "--context-size", String(contextSize), "--prompt", "Once upon a time",
        "--max-tokens", "4", "--threads", "1", ...(json ? ["--json"] : [])];

    it("chat says it on stderr (a JSON warning line with --json); a size that fits says nothing", async () => {
        const {env, db} = hermeticCliEnv("context-cap");
        const plain = await runCliCapturing([...chat(8192, false), "--db", db], {env});
        expect(plain.code, plain.stderr).toBe(0);
        expect(plain.stderr).toContain(`Warning: ${notice}\n`);
        expect(plain.stderr).toContain(`Session ended: ${trained} KV cells zeroed`);

        const json = await runCliCapturing([...chat(8192, true), "--db", db], {env});
        expect(json.code, json.stderr).toBe(0);
        expect(json.stderr.trim().split("\n").map((line) => JSON.parse(line))).toEqual([{warning: {code: "CONTEXT_SIZE_CAPPED", message: notice}}]);

        const fits = await runCliCapturing([...chat(1024, false), "--db", db], {env});
        expect(fits.code, fits.stderr).toBe(0);
        expect(fits.stderr).not.toContain("Warning");
    });

    it("the app's model status carries the size asked for and the notice", async () => {
        const core = Core.create(await loadLlama(), {database: ":memory:", engine: {threads: 1, contextSize: 8192, pool: {idleTimeoutMs: 0}}});
        const service = createCoreService(core, {});
        try {
            const loaded = await service.call("model.load", {path: modelPath!, remember: false});
            expect(loaded.ok).toBe(true);
            const status = await service.call("model.status", {});
            expect(status.ok && (status.value as ApiOutput<"model.status">).info).toMatchObject({
                contextSize: trained, trainContextSize: trained, requestedContextSize: 8192, contextSizeNotice: notice
            });
        } finally {
            service.dispose();
            await core.dispose();
        }
    });
});

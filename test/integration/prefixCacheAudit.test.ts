import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {beforeAll, describe, expect, it} from "vitest";
import {probePrefixCacheTiming} from "../../tools/endpointAudit/prefixCacheTimingProbe.js";
import {makeSyntheticLlama} from "../../tools/gguf/makeSyntheticLlama.js";
import {startLlamaServer} from "../helpers/llamaServer.js";
import {attackerKey, llamaServerForAudit, serversStoppedAfterEach, victimKey} from "../helpers/prefixCacheAuditServers.js";
import {startServe} from "../helpers/startServe.js";
import {requireTestModel} from "../helpers/testModel.js";

/**
 * The audit's prefix-cache probe (PromptPeek's side channel) by time to first token alone, against a
 * server that shares its prompt cache between clients (llama-server with default settings) and against
 * `cleanroom serve`: medians of latencies compared, so this file runs alone (vitest.config.ts,
 * `runAlone`). The cached-token probe and the whole audit are in prefixCacheAuditTokens.test.ts.
 *
 * Both run on a synthetic model (random weights, the test model's tokenizer) wide enough that a fresh
 * prefill costs several times a cached prompt's reuse on any CPU: on the 1 MB test model, a first-generation
 * EPYC prefills 500 characters faster than llama-server restores them from its cache (56 against 70 ms),
 * so there the timing hid a real leak and could not have caught one in serve either.
 */
const testModel = requireTestModel();
const binary = llamaServerForAudit();
const running = serversStoppedAfterEach();
/**
 * About 9M parameters: on a first-generation EPYC at load 7, llama-server answered the victim's opening in 82 ms, another in 382.
 * A context of 4,096 tokens, 2,048 for each slot of llama-server's `--parallel 2`, so that the timing probe's opening can be long.
 */
const costlyPrefill = {embedding: 512, layers: 2, heads: 16, kvHeads: 16, feedForward: 2048, contextLength: 4096} as const;
let modelPath: string;

beforeAll(() => {
    if (testModel == null)
        return;
    modelPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-prefix-timing-")), "costly-prefill.gguf");
    makeSyntheticLlama(modelPath, {tokenizerFrom: testModel, ...costlyPrefill});
});

describe.skipIf(testModel == null)("audit: the prefix-cache probe, by time to first token", () => {
    it.skipIf(binary == null)("by time to first token alone: llama-server answers the victim's opening measurably faster than another of the same length", async () => {
        const server = await startLlamaServer(binary!, modelPath, ["--parallel", "2", "-t", "1", "--no-webui"]);
        running.push(server);
        // 2,800 characters (about 1,750 tokens, within the 2,048 a slot holds): the medians 186-237 against 390-477 ms, a ratio of
        // 0.48-0.50 where `leakShare` asks for 0.8 at most. At 500 a faster CPU prefilled the opening afresh in a few milliseconds beside
        // ~40 ms of fixed cost per request (43 against 50 ms); at 1,200, 86-90 against 118-122 ms, and a run whose every request
        // took 35 ms more failed the ratio (125 against 151), alone on a quiet machine, one run in three.
        // 16 pairs: at 10, two slow same-opening requests lifted p to 0.0014.
        const probe = await probePrefixCacheTiming({baseURL: server.url, model: "costly-prefill", pairs: 16, prefixChars: 2_800});
        console.info(`[prefix timing] llama-server: same opening median ${probe.samePrefixMs.median} ms, another ${probe.differentPrefixMs.median} ms, p ${probe.pValue}`);
        expect(probe.error).toBeNull();
        expect(probe.samePrefixMs.samples).toHaveLength(16);
        // On failure, the figures: whether the cache was not faster, or noise hid it.
        expect(probe.leak, `same opening ${JSON.stringify(probe.samePrefixMs)}, another ${JSON.stringify(probe.differentPrefixMs)}, p ${probe.pValue}`).toBe(true);
    });

    it("by time to first token alone: cleanroom serve answers the victim's opening no faster, across keys", async () => {
        // A context of 2,048 tokens, as the model had before its context was raised for llama-server: enough for the 500 characters probed here.
        const server = await startServe(modelPath, ["--api-key", victimKey, "--api-key", attackerKey, "--context-size", "2048"]);
        running.push(server);
        const probe = await probePrefixCacheTiming({baseURL: server.baseUrl, model: "costly-prefill", victimApiKey: victimKey, attackerApiKey: attackerKey, pairs: 8, prefixChars: 500});
        expect(probe.error).toBeNull();
        // 8 of each: enough for p < 0.001 had every same-opening request been the faster.
        expect(probe.differentPrefixMs.samples).toHaveLength(8);
        expect(probe.leak, `same opening ${JSON.stringify(probe.samePrefixMs)}, another ${JSON.stringify(probe.differentPrefixMs)}, p ${probe.pValue}`).toBe(false);
    });
});

import {afterEach, describe, expect, it} from "vitest";
import {auditEndpoint} from "../../tools/endpointAudit/auditEndpoint.js";
import {probePrefixCache} from "../../tools/endpointAudit/prefixCacheProbe.js";
import {probePrefixCacheTiming} from "../../tools/endpointAudit/prefixCacheTimingProbe.js";
import {findLlamaServer, startLlamaServer, type RunningLlamaServer} from "../helpers/llamaServer.js";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {requireTestModel} from "../helpers/testModel.js";

/**
 * The audit's prefix-cache probe (PromptPeek's side channel), against a server that shares its
 * prompt cache between clients (llama-server with default settings) and against `cleanroom serve`.
 */
const modelPath = requireTestModel();
const binary = findLlamaServer();
if (binary == null && process.env.CI === "true")
    throw new Error("llama-server is missing: .ci/run must build it with scripts/build-llama-cpp.sh");

const running: Array<ServeProcess | RunningLlamaServer> = [];
afterEach(async () => {
    await Promise.all(running.splice(0).map(async (server) => "stop" in server ? await server.stop() : await server.close()));
});

const victimKey = "victim-key-4417-aaaa";
const attackerKey = "attacker-key-9999-bbbb";

describe.skipIf(modelPath == null)("audit: the prefix-cache probe", () => {
    it.skipIf(binary == null)("finds the PIN leak in llama-server (default settings, 2 slots): every guess is served the victim's prefix, the right digits more of it", async () => {
        const server = await startLlamaServer(binary!, modelPath!, ["--parallel", "2", "-t", "1", "--no-webui"]);
        running.push(server);
        const probe = await probePrefixCache({baseURL: server.url, model: "stories260K"});
        expect(probe.error).toBeNull();
        expect(probe.measuredBy).toBe("cached_tokens");
        expect(probe.leak).toBe(true);
        const cached = Object.fromEntries(probe.rounds.map((round) => [round.guess, round.cachedTokens!]));
        // The shared opening comes back to the attacker; two right digits bring more; the right PIN brings all but the last token.
        expect(cached["1234"]).toBeGreaterThan(0);
        expect(cached["9417"]).toBe(cached["1234"]);
        expect(cached["4400"]).toBeGreaterThan(cached["1234"]!);
        expect(cached["4417"]).toBeGreaterThan(cached["4400"]!);
        expect(probe.bestGuess).toBe("4417");

        // llama-server takes vLLM's cache_salt without honouring it: different salts still share the prefix.
        const salted = await probePrefixCache({baseURL: server.url, model: "stories260K", salts: {victim: "victim-salt", attacker: "attacker-salt"}});
        expect(salted).toMatchObject({error: null, leak: true, bestGuess: "4417"});
    });

    it("finds nothing in cleanroom serve: no cached token across keys, nor within one key without a cache_salt or with different salts", async () => {
        const server = await startServe(modelPath!, ["--api-key", victimKey, "--api-key", attackerKey]);
        running.push(server);
        for (const [attackerApiKey, salts] of [
            [attackerKey, undefined], [victimKey, undefined], [victimKey, {victim: "victim-salt", attacker: "attacker-salt"}]
        ] as const) {
            const probe = await probePrefixCache({baseURL: server.baseUrl, model: "stories260K", victimApiKey: victimKey, attackerApiKey, salts});
            expect(probe.error).toBeNull();
            expect(probe.measuredBy).toBe("cached_tokens");
            expect(probe.rounds.map((round) => round.cachedTokens)).toEqual([0, 0, 0, 0]);
            expect(probe).toMatchObject({leak: false, bestGuess: null, crossTenantCachedTokens: 0});
        }
    });

    it.skipIf(binary == null)("by time to first token alone: llama-server answers the victim's opening measurably faster than another of the same length", async () => {
        const server = await startLlamaServer(binary!, modelPath!, ["--parallel", "2", "-t", "1", "--no-webui"]);
        running.push(server);
        const probe = await probePrefixCacheTiming({baseURL: server.url, model: "stories260K", pairs: 10, prefixChars: 500});
        expect(probe.error).toBeNull();
        expect(probe.samePrefixMs.samples).toHaveLength(10);
        expect(probe).toMatchObject({leak: true, pValue: expect.any(Number)});
        expect(probe.samePrefixMs.median).toBeLessThan(probe.differentPrefixMs.median);
    });

    it("by time to first token alone: cleanroom serve answers the victim's opening no faster, across keys", async () => {
        const server = await startServe(modelPath!, ["--api-key", victimKey, "--api-key", attackerKey]);
        running.push(server);
        const probe = await probePrefixCacheTiming({baseURL: server.baseUrl, model: "stories260K", victimApiKey: victimKey, attackerApiKey: attackerKey, pairs: 8, prefixChars: 300});
        expect(probe.error).toBeNull();
        // 8 of each: enough for p < 0.001 had every same-opening request been the faster.
        expect(probe.differentPrefixMs.samples).toHaveLength(8);
        expect(probe.leak).toBe(false);
    });

    it("the whole audit against cleanroom serve, 8 concurrent tenants: 0 leaks, 0 oversize requests accepted, 0 prefix-cache leaks", async () => {
        const server = await startServe(modelPath!, ["--parallel", "8"]);
        running.push(server);
        const report = await auditEndpoint({baseURL: server.baseUrl, model: "stories260K", tenants: 8, requests: 16, concurrency: 8, maxTokens: 8, seed: 1, timingPairs: 0});
        expect(report.completed).toBeGreaterThan(0);
        expect(report.leaks).toEqual([]);
        expect(report.oversizeRequests).toBeGreaterThan(0);
        expect(report.oversizeAccepted).toBe(0);
        // Every refusal is a refusal to overflow, never a busy server or a failure.
        expect(report.errors.map((error) => error.code)).toEqual(report.errors.map(() => "CLOUD_OVER_LIMIT"));
        expect(report.prefixCache).toMatchObject({leak: false, measuredBy: "cached_tokens", error: null});
        expect(report.prefixCacheSalted).toMatchObject({leak: false, measuredBy: "cached_tokens", error: null, salted: true});
        expect(report.prefixCacheTiming).toBeNull(); // --timing-pairs 0: its own tests above
    });
});

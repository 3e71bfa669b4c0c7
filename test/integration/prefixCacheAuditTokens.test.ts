import {describe, expect, it} from "vitest";
import {auditEndpoint} from "../../tools/endpointAudit/auditEndpoint.js";
import {probePrefixCache} from "../../tools/endpointAudit/prefixCacheProbe.js";
import {startLlamaServer} from "../helpers/llamaServer.js";
import {attackerKey, llamaServerForAudit, serversStoppedAfterEach, victimKey} from "../helpers/prefixCacheAuditServers.js";
import {startServe} from "../helpers/startServe.js";
import {requireTestModel} from "../helpers/testModel.js";

/**
 * The audit's prefix-cache probe (PromptPeek's side channel) by the cached-token counts a server
 * reports, against a server that shares its prompt cache between clients (llama-server with default
 * settings) and against `cleanroom serve`, and the whole audit. No claim here rests on the clock, so
 * this file runs with the others; the timing probe's claims (medians of latencies) are in
 * prefixCacheAudit.test.ts, which runs alone (vitest.config.ts, `runAlone`).
 */
const modelPath = requireTestModel();
const binary = llamaServerForAudit();
const running = serversStoppedAfterEach();

describe.skipIf(modelPath == null)("audit: the prefix-cache probe, by cached tokens", () => {
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
        expect(report.prefixCacheTiming).toBeNull(); // --timing-pairs 0: its own tests are in prefixCacheAudit.test.ts
    });
});

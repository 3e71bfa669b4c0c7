import crypto from "node:crypto";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex} from "../../src/core/common/cloud/fingerprints.js";
import {plantCanaries} from "../../src/core/common/cloud/plantCanaries.js";
import {hashCanary} from "../../src/core/common/cloud/canary.js";
import type {CanaryBook, PlantedCanary} from "../../src/core/common/cloud/types.js";
import {toWireError} from "../../src/core/common/errors.js";
import {CloudClient, type CloudChatMessage} from "../../src/core/node/cloud/CloudClient.js";
import {fillerText, seededRandom} from "./fillerText.js";
import {probePrefixCache, type PrefixCacheProbeReport} from "./prefixCacheProbe.js";
import {probePrefixCacheTiming, type PrefixCacheTimingReport} from "./prefixCacheTimingProbe.js";

export type AuditEndpointOptions = {
    baseURL: string,
    model: string,
    apiKey?: string | null,
    /** Tenants played, each with its own canaries and texts. Defaults to `4`. */
    tenants?: number,
    /** Requests in all. Defaults to `40`. */
    requests?: number,
    /** Requests in flight at once. Defaults to `4`. */
    concurrency?: number,
    /** The endpoint's context limit in tokens; defaults to what its /models reports. */
    contextLimit?: number | null,
    /**
     * Characters per token of the filler, to size requests near the limit. Defaults to what the
     * endpoint's tokenizer counts (`POST /tokenize`) on a sample of it, else `4` (typical of the
     * tokenizers of chat models on English; see `estimatedCharsPerToken` for the spread).
     */
    charsPerToken?: number,
    /** Reply budget per request. Defaults to `32`. */
    maxTokens?: number,
    timeoutMs?: number,
    seed?: number,
    /** Runs the prefix-cache probes (`probePrefixCache`, `probePrefixCacheTiming`) after the leak probe, when the endpoint answered. Defaults to `true`. */
    prefixCacheProbe?: boolean,
    /** Rounds per kind of attacker request in the time-to-first-token probe; `0` skips it. Defaults to `16`. */
    timingPairs?: number,
    onProgress?: (done: number, total: number) => void
};

export type AuditLeak = {
    request: number,
    tenant: string,
    kind: "cross-tenant-canary" | "same-tenant-other-request" | "foreign-canary" | "fingerprint",
    /** Tenants whose data showed up. */
    from: string[]
};

export type AuditReport = {
    endpoint: string,
    model: string,
    contextLimit: number | null,
    requests: number,
    completed: number,
    sizes: {normal: number, nearLimit: number, overLimit: number},
    leaks: AuditLeak[],
    oversizeRequests: number,
    oversizeAccepted: number,
    /** How requests were sized: characters per token, and who counted them. */
    sizing: {charsPerToken: number, countedBy: "endpoint" | "estimate" | "given"},
    errors: Array<{request: number, code: string, message: string}>,
    /** Does a tenant's prompt prefix come back from another tenant's cache? Null when not probed. */
    prefixCache: PrefixCacheProbeReport | null,
    /** The same probe with a different `cache_salt` for victim and attacker: does the endpoint honour vLLM's field? Null when not probed. */
    prefixCacheSalted: PrefixCacheProbeReport | null,
    /** The prefix cache measured by time to first token alone (same prefix as the victim's against a different one). Null when not probed. */
    prefixCacheTiming: PrefixCacheTimingReport | null
};

const defaultCharsPerToken = 4;

type Probe = {index: number, tenant: string, size: "normal" | "nearLimit" | "overLimit", messages: CloudChatMessage[]};

/**
 * A cross-tenant leak probe of any OpenAI-compatible endpoint: plays several tenants with their
 * own canaries and realistic text, sends many concurrent requests, some near and past the
 * endpoint's context limit (the incident's trigger), and reports every reply that carries
 * another tenant's canary or text, and every oversize request the server accepted.
 */
export async function auditEndpoint(options: AuditEndpointOptions): Promise<AuditReport> {
    const tenants = Array.from({length: options.tenants ?? 4}, (_, index) => `tenant-${index + 1}`);
    const total = options.requests ?? 40;
    const concurrency = Math.max(1, options.concurrency ?? 4);
    const maxTokens = options.maxTokens ?? 32;
    const random = seededRandom(options.seed ?? crypto.randomInt(1, 2 ** 31));
    const client = new CloudClient({baseURL: options.baseURL, model: options.model, apiKey: options.apiKey ?? null, contextLimit: options.contextLimit ?? null},
        {timeoutMs: options.timeoutMs ?? 120_000, retries: 0});
    const contextLimit = await client.contextLimit();
    const sizing = options.charsPerToken != null
        ? {charsPerToken: options.charsPerToken, countedBy: "given" as const}
        : await measureCharsPerToken(client);
    const charsPerToken = sizing.charsPerToken;

    const planted = new Map<string, PlantedCanary>();
    const book: CanaryBook = {lookup: (hash) => planted.get(hash)};
    const textsByTenant = new Map<string, string[]>(tenants.map((tenant) => [tenant, []]));

    const probes: Probe[] = Array.from({length: total}, (_, index) => {
        const tenant = tenants[index % tenants.length]!;
        const roll = random();
        const size = contextLimit == null ? "normal" : roll < 0.5 ? "normal" : roll < 0.75 ? "nearLimit" : "overLimit";
        const targetTokens = contextLimit == null
            ? 200 + Math.floor(random() * 600)
            : size === "normal"
                ? Math.floor(contextLimit * (0.1 + random() * 0.3))
                : size === "nearLimit"
                    // 60-98%: a server whose real memory is smaller than it advertises (the incident: 681K of 1M) fails here.
                    ? Math.floor(contextLimit * (0.6 + random() * 0.38)) - maxTokens
                    : Math.floor(contextLimit * (1.05 + random() * 0.25));
        const text = fillerText(random, Math.max(50, targetTokens * charsPerToken));
        const {messages, canaries} = plantCanaries<CloudChatMessage>([
            {role: "system", content: `You are the assistant of ${tenant}.`},
            {role: "user", content: text}
        ], {charsPerCanary: 600});
        for (const canary of canaries)
            planted.set(hashCanary(canary), {conversationId: tenant, requestId: String(index)});
        textsByTenant.get(tenant)!.push(text);
        return {index, tenant, size, messages};
    });

    const report: AuditReport = {
        endpoint: options.baseURL, model: options.model, contextLimit, requests: total, completed: 0,
        sizes: {
            normal: probes.filter((probe) => probe.size === "normal").length,
            nearLimit: probes.filter((probe) => probe.size === "nearLimit").length,
            overLimit: probes.filter((probe) => probe.size === "overLimit").length
        },
        leaks: [], oversizeRequests: 0, oversizeAccepted: 0, sizing, errors: [], prefixCache: null, prefixCacheSalted: null, prefixCacheTiming: null
    };

    // Fingerprints of every tenant's texts, to find canary-free leaks between tenants.
    const fingerprintKey = new Uint8Array(crypto.randomBytes(32)); // this audit's own: nothing of it outlives the run
    const indexExcept = new Map(tenants.map((tenant) => {
        const index = new FingerprintIndex({key: fingerprintKey});
        for (const [other, texts] of textsByTenant)
            if (other !== tenant)
                index.addConversation(texts);
        return [tenant, index];
    }));

    let next = 0;
    const worker = async () => {
        for (let probe = probes[next++]; probe != null; probe = probes[next++]) {
            if (probe.size === "overLimit")
                report.oversizeRequests++;
            try {
                let reply = "";
                for await (const event of client.streamChat(probe.messages, {maxTokens}))
                    if (event.type === "text")
                        reply += event.text;
                report.completed++;
                if (probe.size === "overLimit")
                    report.oversizeAccepted++;

                const scan = CanaryScanner.scanText(reply, {
                    conversationId: probe.tenant, requestId: String(probe.index), book,
                    fingerprints: indexExcept.get(probe.tenant)!.excluding(probe.messages.map((message) => message.content)),
                    holdBackForFingerprints: false
                });
                const from = new Set<string>();
                let kind: AuditLeak["kind"] | null = null;
                for (const finding of scan.allFindings) {
                    if (finding.kind === "cross-request") {
                        from.add(finding.planted.conversationId);
                        kind ??= finding.planted.conversationId === probe.tenant ? "same-tenant-other-request" : "cross-tenant-canary";
                    } else if (finding.kind === "foreign-canary")
                        kind ??= "foreign-canary";
                    else if (finding.kind === "fingerprint")
                        kind ??= "fingerprint";
                }
                if (kind != null)
                    report.leaks.push({request: probe.index, tenant: probe.tenant, kind, from: [...from]});
            } catch (error) {
                const wire = toWireError(error);
                report.errors.push({request: probe.index, code: wire.code, message: wire.message});
            }
            options.onProgress?.(report.completed + report.errors.length, total);
        }
    };
    await Promise.all(Array.from({length: concurrency}, worker));
    report.leaks.sort((a, b) => a.request - b.request);
    report.errors.sort((a, b) => a.request - b.request);
    if (options.prefixCacheProbe !== false && report.completed > 0) {
        const probe = {baseURL: options.baseURL, model: options.model, victimApiKey: options.apiKey ?? null, timeoutMs: options.timeoutMs};
        report.prefixCache = await probePrefixCache(probe);
        const salt = () => crypto.randomBytes(16).toString("hex");
        report.prefixCacheSalted = await probePrefixCache({...probe, salts: {victim: salt(), attacker: salt()}});
        if (options.timingPairs !== 0)
            report.prefixCacheTiming = await probePrefixCacheTiming({...probe, pairs: options.timingPairs});
    }
    return report;
}

/** Characters per token of the filler as the endpoint counts them, on a fixed sample; else the default. */
async function measureCharsPerToken(client: CloudClient): Promise<AuditReport["sizing"]> {
    const sample = fillerText(seededRandom(1), 4000);
    const counted = await client.countTokens(sample);
    return counted.countedBy === "endpoint" && counted.tokens > 0
        ? {charsPerToken: sample.length / counted.tokens, countedBy: "endpoint"}
        : {charsPerToken: defaultCharsPerToken, countedBy: "estimate"};
}

import crypto from "node:crypto";
import {EventRelay} from "lifecycle-utils";
import type {LlamaGrammar, LlamaModel} from "node-llama-cpp";
import {ContextOverflowError, CleanroomError, ModelNotLoadedError} from "../../common/errors.js";
import {MaxTokensSchema} from "../../common/api/limits.js";
import type {ConversationSettings, ScrubReport} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import type {SessionEnd} from "../engine/ConversationContext.js";
import type {ChatTurnInput, LocalEngine, PreparedPrompt} from "../engine/LocalEngine.js";
import {toScrubReport} from "../engine/toScrubReport.js";
import {JsonGrammarCache} from "../serving/JsonGrammarCache.js";

/**
 * Who asks: an API key (its id: the stored key's id, or `key 1` for the first `--api-key`), or
 * `loopback` without keys. Caches and sessions are keyed by `id`, so two keys under the same
 * label share nothing; `label` is what the log, the audit trail and the Isolation panel show.
 * Never the key itself, nor its hash.
 */
export type ApiTenant = {id: string, label: string};

/** Every loopback client when the server takes no keys: one tenant. */
export const loopbackTenant: ApiTenant = {id: "loopback", label: "loopback"};

/**
 * Who asked, as an API request's audit rows record it: the key's label, and its id (two keys may
 * share a label); no id for `loopback`, which is no key.
 */
export function auditedTenant(tenant: ApiTenant): {tenant: string, keyId?: string} {
    return tenant.id === loopbackTenant.id ? {tenant: tenant.label} : {tenant: tenant.label, keyId: tenant.id};
}

/** One message of an API request, its text already joined from its parts. */
export type ApiMessage = {role: "system" | "user" | "assistant", content: string};

export type ApiRequestInput = {
    tenant: ApiTenant,
    /** What the model continues: a conversation (the last message the user's, rendered by the chat template), or a raw text prompt. */
    source: {kind: "chat", messages: ApiMessage[]} | {kind: "text", prompt: string},
    /** Reply budget in tokens. Defaults to the room the prompt leaves in the context. */
    maxTokens?: number,
    temperature: number,
    topP?: number,
    seed?: number | null,
    /** Texts that end the reply. Defaults to none. */
    stop?: string[],
    /** The reply must be JSON (`{schema: null}`), or JSON matching `schema`. Defaults to free text. */
    json?: {schema: Record<string, unknown> | null},
    /**
     * Opt-in reuse (the client's `cache_salt`): requests of the same tenant with the same salt run in
     * one context, kept between them and scrubbed once none came for `idleMs`. Defaults to none:
     * the request's context ends with it.
     */
    reuse?: {salt: string, idleMs: number}
};

/** A request accepted: its prompt fits the context, with its reply budget. */
export type PreparedApiRequest = {
    requestId: string,
    /** The session the request runs in: its own (`requestId`), or its tenant and salt's reuse cache. */
    sessionId: string,
    input: ApiRequestInput,
    settings: ConversationSettings,
    turn: Pick<ChatTurnInput, "history" | "userText" | "grammar">,
    prompt: PreparedPrompt
};

export type ApiRequestResult = {
    requestId: string,
    text: string,
    finishReason: "stop" | "length" | "aborted",
    promptTokens: number,
    completionTokens: number,
    /** Prompt tokens found already evaluated: 0 unless an earlier request of the same tenant and salt left them. */
    cachedTokens: number,
    /** The scrub of the request's context, which ended with it; null when it was kept for the reuse cache. */
    scrub: ScrubReport | null,
    /** The reuse cache the request's context was kept in, and when it is scrubbed unless used again. */
    cache: {sessionId: string, idleMs: number} | null
};

/** A request's reply, complete: what `onAnswered` hears before the request's context is scrubbed. */
export type ApiAnswer = Omit<ApiRequestResult, "scrub" | "cache">;

export type ApiRunCallbacks = {
    signal?: AbortSignal,
    onText?: (text: string) => void,
    /**
     * Called once with the complete reply, before the request's context is scrubbed: the client can
     * have its reply (and send its next request) while the scrub runs. Defaults to none.
     */
    onAnswered?: (answer: ApiAnswer) => void
};

/** A reuse cache (tenant and `cache_salt`) ended: idle, at shutdown, its key revoked, or dropped by the pool. */
export type ApiCacheEnd = {
    sessionId: string,
    /** The tenant's label (see `ApiTenant`). */
    tenant: string,
    reason: "idle" | "shutdown" | "revoked",
    /** Null when the context was already gone (evicted, or ended by a failed request). */
    scrub: ScrubReport | null,
    error: unknown
};

type ReuseCache = {tenant: ApiTenant, users: number, timer: NodeJS.Timeout | null, lock: Promise<void>};

/** Top-k is not an OpenAI parameter: llama-server's default. */
const apiTopK = 40;

/**
 * Requests of the local API server (`cleanroom serve`): each runs in a llama.cpp context of its
 * own, created for it and ended (zeroed, verified, freed) as soon as it is answered, so nothing
 * (KV, prompt cache, slot) passes from one request to another. A request that does not fit is
 * refused by `prepare`, before anything is evaluated.
 */
export class ApiRequestService {
    private readonly _engine: LocalEngine;
    private readonly _audit: AuditLog;
    /** Names the reuse caches without writing down any salt: an HMAC under a key of this process only. */
    private readonly _cacheNameKey = crypto.randomBytes(32);
    private readonly _caches = new Map<string, ReuseCache>();
    /** `response_format` grammars, per tenant and schema: built once, not per request. */
    private readonly _grammars = new JsonGrammarCache<LlamaGrammar, LlamaModel | null>();
    public readonly onCacheEnd = new EventRelay<ApiCacheEnd>();

    public constructor(engine: LocalEngine, audit: AuditLog) {
        this._engine = engine;
        this._audit = audit;
    }

    /**
     * Builds the prompt and checks that it fits with its reply budget (`ContextOverflowError` otherwise,
     * recorded), and the JSON grammar asked for (`INVALID_INPUT` for a schema that cannot be followed).
     */
    public async prepare(input: ApiRequestInput): Promise<PreparedApiRequest> {
        const requestId = `api-${crypto.randomBytes(8).toString("hex")}`;
        const {source} = input;
        const messages = source.kind === "chat" ? source.messages : [];
        const last = source.kind === "chat" ? messages.at(-1) : {role: "user" as const, content: source.prompt};
        if (last?.role !== "user")
            throw new CleanroomError("INVALID_INPUT", "The last message must be the user's.", {param: "messages"});
        const systemPrompt = messages.filter((message) => message.role === "system").map((message) => message.content).join("\n\n");
        const history = messages.slice(0, -1).flatMap((message) => message.role === "system" ? [] : [{role: message.role, content: message.content}]);
        const settings: ConversationSettings = {
            systemPrompt,
            historyPolicy: "refuse",
            sampling: {temperature: input.temperature, topK: apiTopK, topP: input.topP ?? 1, seed: input.seed ?? null, maxTokens: input.maxTokens ?? 1}
        };
        let prompt: PreparedPrompt;
        try {
            prompt = source.kind === "text"
                ? this._engine.prepareTextPrompt(source.prompt, input.maxTokens ?? 1)
                : this._engine.preparePrompt({settings, history, userText: last.content, maxTokens: input.maxTokens ?? 1});
            if (input.maxTokens == null) {
                const room = Math.min(this._engine.info!.contextSize - prompt.tokens.length, MaxTokensSchema.maxValue!);
                prompt = {...prompt, maxTokens: room};
            }
        } catch (error) {
            if (error instanceof ContextOverflowError)
                this._audit.record({kind: "api.refused", conversationId: requestId, data: {...auditedTenant(input.tenant), kind: source.kind, ...error.overflow}});
            throw error;
        }
        const {json} = input;
        const grammar = json == null ? undefined
            : await this._grammars.get(this._engine.model, input.tenant.id, json.schema, () => this._engine.createJsonGrammar(json.schema));
        const sessionId = input.reuse == null ? requestId : this._cacheSessionId(input.tenant, input.reuse.salt);
        return {requestId, sessionId, input, settings, turn: {history, userText: last.content, grammar}, prompt};
    }

    /**
     * Runs the request in its own context, then ends that context's session (scrubbed);
     * `ScrubUnverifiedError` if the scrub could not be verified. `onAnswered` hears the reply before
     * the scrub runs. A request with a `reuse` salt runs
     * in its tenant and salt's cache instead (one request at a time), kept until it idles out.
     */
    public async run(request: PreparedApiRequest, callbacks: ApiRunCallbacks = {}): Promise<ApiRequestResult> {
        const {reuse} = request.input;
        if (reuse == null)
            return await this._run(request, callbacks);
        const cache = this._caches.get(request.sessionId) ?? {tenant: request.input.tenant, users: 0, timer: null, lock: Promise.resolve()};
        this._caches.set(request.sessionId, cache);
        cache.users++;
        if (cache.timer != null)
            clearTimeout(cache.timer);
        cache.timer = null;
        const previous = cache.lock;
        let release!: () => void;
        cache.lock = new Promise((resolve) => release = resolve);
        try {
            await previous;
            return await this._run(request, callbacks);
        } finally {
            release();
            if (--cache.users === 0)
                cache.timer = setTimeout(() => void this._endCache(request.sessionId, "idle"), reuse.idleMs);
        }
    }

    /**
     * Scrubs every reuse cache now (the server is stopping), or only those of the tenant `tenantId`
     * (its key was revoked), each reported on `onCacheEnd`; forgets their `response_format` grammars too.
     */
    public async endCaches(tenantId?: string): Promise<void> {
        this._grammars.forget(tenantId);
        const ending = [...this._caches].filter(([, cache]) => tenantId == null || cache.tenant.id === tenantId).map(([sessionId]) => sessionId);
        await Promise.all(ending.map((sessionId) => this._endCache(sessionId, tenantId == null ? "shutdown" : "revoked")));
    }

    private async _run(request: PreparedApiRequest, {signal, onText, onAnswered}: ApiRunCallbacks): Promise<ApiRequestResult> {
        const {requestId, sessionId, input} = request;
        const kept = input.reuse != null;
        let end: SessionEnd | null = null;
        let answer: ApiAnswer | null = null;
        const pool = this._engine.pool;
        if (pool == null)
            throw new ModelNotLoadedError("apiServer", "No local model is loaded: the local API server serves the model the app has loaded; load one there first.");
        // The engine ends a cancelled or failed request's session itself: its scrub report is caught here.
        const endListener = pool.onSessionEnd.createListener((ended) => {
            if (ended.conversationId === sessionId)
                end = ended;
        });
        this._audit.record({kind: "api.request", conversationId: requestId, data: {
            ...auditedTenant(input.tenant), kind: input.source.kind, promptTokens: request.prompt.tokens.length, maxTokens: request.prompt.maxTokens,
            ...kept ? {cacheSession: sessionId} : {}
        }});
        try {
            const result = await this._engine.runTurn({
                conversationId: sessionId, settings: request.settings, ...request.turn,
                maxTokens: request.prompt.maxTokens, stopTexts: input.stop, signal, onText
            }, request.prompt);
            const finishReason = result.finishReason === "maxTokens" ? "length" : result.finishReason;
            // A JSON reply is complete at its closing brace: the whitespace its grammar allows after it is not part of it.
            const text = request.turn.grammar?.trimWhitespaceSuffix === true ? result.text.trimEnd() : result.text;
            answer = {
                requestId, text, finishReason, promptTokens: request.prompt.tokens.length,
                completionTokens: result.tokens.length, cachedTokens: result.reusedPromptTokens
            };
            this._audit.record({kind: "api.answered", conversationId: requestId, data: {
                ...auditedTenant(input.tenant), kind: input.source.kind, finishReason, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens,
                cachedTokens: answer.cachedTokens, ...kept ? {cacheSession: sessionId} : {}
            }});
            // The reply goes to the client now; the scrub below is on neither its path nor the next request's.
            onAnswered?.(answer);
            if (!kept)
                end ??= await this._engine.endSession(sessionId, "request");
            const ended = end as SessionEnd | null;
            return {
                ...answer,
                scrub: ended == null ? null : toScrubReport(ended),
                cache: kept && ended == null ? {sessionId, idleMs: input.reuse!.idleMs} : null
            };
        } finally {
            // Whatever happened, the request's context does not outlive it (unless kept for reuse, and then only after an answer).
            if (end == null && (!kept || answer == null))
                await this._engine.endSession(sessionId, kept ? "fault" : "request").catch(() => undefined);
            endListener.dispose();
        }
    }

    private _cacheSessionId(tenant: ApiTenant, salt: string) {
        return `api-cache-${crypto.createHmac("sha256", this._cacheNameKey).update(tenant.id).update("\0").update(salt).digest("hex").slice(0, 24)}`;
    }

    private async _endCache(sessionId: string, reason: ApiCacheEnd["reason"]) {
        const cache = this._caches.get(sessionId);
        if (cache == null)
            return;
        if (cache.timer != null)
            clearTimeout(cache.timer);
        cache.timer = null;
        // After the request using it, if one is: a cache is never scrubbed under a running request.
        await cache.lock;
        if (reason === "idle" && cache.users > 0)
            return;
        this._caches.delete(sessionId);
        let scrub: ScrubReport | null = null;
        let error: unknown = null;
        try {
            const end = await this._engine.endSession(sessionId, reason === "revoked" ? "close" : reason);
            scrub = end == null ? null : toScrubReport(end);
        } catch (caught) {
            error = caught;
        }
        this.onCacheEnd.dispatchEvent({sessionId, tenant: cache.tenant.label, reason, scrub, error});
    }
}

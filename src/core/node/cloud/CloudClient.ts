import type OpenAI from "openai";
import * as z from "zod";
import {cloudEndpointProblem} from "../../common/cloud/cloudEndpointProblem.js";
import {CleanroomError, InsecureCloudEndpointError} from "../../common/errors.js";
import {EndpointCacheSaltSupport} from "./EndpointCacheSaltSupport.js";
import {EndpointTokenizerCache} from "./EndpointTokenizerCache.js";
import {estimateCloudTokens} from "./estimateCloudTokens.js";

export type CloudEndpoint = {
    /** OpenAI-compatible base URL, e.g. `https://host/v1`. */
    baseURL: string,
    model: string,
    apiKey: string | null,
    /** Tokens the endpoint accepts (prompt + reply). `null`: ask the endpoint's /models. */
    contextLimit: number | null
};

export type CloudClientOptions = {
    /** Gives up on a request with no answer for this long. Defaults to `60_000` ms. */
    timeoutMs?: number,
    /** Tries again, only while nothing was received yet. Defaults to `2`. */
    retries?: number,
    /** For tests. Defaults to the global fetch. */
    fetch?: typeof fetch,
    /**
     * What is known of each endpoint's tokenizer. Pass one that outlives the client (the core
     * holds one) so that an endpoint is probed once. Defaults to a new, empty one.
     */
    tokenizers?: EndpointTokenizerCache,
    /** Which endpoints take `cache_salt`, learnt as `tokenizers` is. Defaults to a new, empty one. */
    cacheSalts?: EndpointCacheSaltSupport
};

/** A token count, and whose: the endpoint's own tokenizer, or our estimate (`estimateCloudTokens`). */
export type CloudTokenCount = {tokens: number, countedBy: "endpoint" | "estimate"};

export type CloudChatMessage = {role: "system" | "user" | "assistant", content: string};

export type CloudStreamEvent =
    | {type: "text", text: string}
    | {type: "end", finishReason: string | null, model: string | null, usage: {promptTokens: number, completionTokens: number} | null};

const defaultTimeoutMs = 60_000;
const defaultRetries = 2;
/** llama-server and vLLM answer `{"tokens": [1, 2], …}` (llama-server: `[{id, piece}]` with `with_pieces`). */
const TokenizeReplySchema = z.object({tokens: z.array(z.union([z.number(), z.object({id: z.number()})]))});
/** Answers that say the endpoint has no tokenizer (rather than that this try failed). */
const noTokenizerStatuses = new Set([404, 405, 410, 415, 422, 501]);

/** The SDK, loaded by the first request: a process that never asks a cloud endpoint (a local chat turn) never loads it. */
let openAiSdk: Promise<typeof OpenAI> | null = null;
function loadOpenAiSdk() {
    return openAiSdk ??= import("openai").then((module) => module.default);
}

/**
 * Chat completions against any OpenAI-compatible endpoint through the official SDK. The SDK's
 * own retries are off: a request is tried again only while nothing of its reply has arrived.
 * A plain http:// endpoint off this machine is refused (`InsecureCloudEndpointError`).
 */
export class CloudClient {
    public readonly endpoint: Readonly<CloudEndpoint>;
    private _openai: Promise<OpenAI> | null = null;
    /** The `fetch` given to the constructor, for the SDK; else the SDK's own. */
    private readonly _sdkFetch: typeof fetch | undefined;
    private readonly _retries: number;
    private readonly _timeoutMs: number;
    private readonly _fetch: typeof fetch;
    private readonly _tokenizers: EndpointTokenizerCache;
    private readonly _cacheSalts: EndpointCacheSaltSupport;

    public constructor(endpoint: CloudEndpoint, {timeoutMs = defaultTimeoutMs, retries = defaultRetries, fetch, tokenizers, cacheSalts}: CloudClientOptions = {}) {
        const problem = cloudEndpointProblem(endpoint.baseURL);
        if (problem != null)
            throw new InsecureCloudEndpointError(problem);
        this.endpoint = endpoint;
        this._retries = retries;
        this._timeoutMs = timeoutMs;
        this._fetch = fetch ?? globalThis.fetch;
        this._tokenizers = tokenizers ?? new EndpointTokenizerCache();
        this._cacheSalts = cacheSalts ?? new EndpointCacheSaltSupport();
        this._sdkFetch = fetch;
    }

    private _client(): Promise<OpenAI> {
        return this._openai ??= loadOpenAiSdk().then((Sdk) => new Sdk({
            baseURL: this.endpoint.baseURL,
            // Some local servers need no key; the SDK insists on a non-empty string.
            apiKey: this.endpoint.apiKey ?? "none",
            timeout: this._timeoutMs,
            maxRetries: 0,
            // The SDK logs unparseable stream events (raw reply text, which can hold another tenant's
            // data or our canaries) with console.error by default, and more with OPENAI_LOG: never.
            logLevel: "off",
            ...(this._sdkFetch != null ? {fetch: this._sdkFetch} : {})
        }));
    }

    /** The endpoint's context limit: configured, else as /models reports it (`context_length`, `max_model_len`, `n_ctx`). */
    public async contextLimit(signal?: AbortSignal): Promise<number | null> {
        if (this.endpoint.contextLimit != null)
            return this.endpoint.contextLimit;

        try {
            const page = await (await this._client()).models.list({signal});
            for (const model of page.data) {
                const record = model as unknown as Record<string, unknown>;
                if (model.id !== this.endpoint.model && page.data.length > 1)
                    continue;
                const meta = (record.meta ?? {}) as Record<string, unknown>;
                for (const value of [record.context_length, record.max_model_len, meta.n_ctx_train, meta.n_ctx, record.n_ctx])
                    if (typeof value === "number" && value > 0)
                        return value;
            }
        } catch {
            // No limit known: the server's own refusal is then the only guard.
        }
        return null;
    }

    /**
     * `POST /tokenize` at the endpoint's root (`https://host/v1` → `https://host/tokenize`), as
     * llama.cpp's llama-server (and vLLM) offer it.
     */
    public get tokenizeUrl(): string {
        const url = new URL(this.endpoint.baseURL);
        url.pathname = `${url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "")}/tokenize`;
        url.search = "";
        url.hash = "";
        return url.toString();
    }

    /**
     * Counts the text's tokens as the endpoint does: with its own tokenizer when it offers one
     * (learnt once per endpoint), else with our calibrated estimate. Never throws for the count:
     * an endpoint that cannot count is estimated, and the request itself then says what is wrong.
     */
    public async countTokens(text: string, signal?: AbortSignal): Promise<CloudTokenCount> {
        const url = this.tokenizeUrl;
        if (this._tokenizers.offersTokenizer(url) !== false) {
            const tokens = await this._tokenize(url, text, signal);
            if (tokens != null)
                return {tokens, countedBy: "endpoint"};
        }
        return {tokens: estimateCloudTokens(text), countedBy: "estimate"};
    }

    private async _tokenize(url: string, text: string, signal?: AbortSignal): Promise<number | null> {
        const timeout = AbortSignal.timeout(this._timeoutMs);
        try {
            const response = await this._fetch(url, {
                method: "POST",
                headers: {
                    "content-type": "application/json",
                    ...(this.endpoint.apiKey != null ? {authorization: `Bearer ${this.endpoint.apiKey}`} : {})
                },
                // llama-server reads `content`; vLLM and SGLang read `prompt` (and `model`); each ignores the others.
                body: JSON.stringify({content: text, prompt: text, model: this.endpoint.model}),
                signal: signal == null ? timeout : AbortSignal.any([signal, timeout])
            });
            if (!response.ok) {
                await response.body?.cancel();
                if (noTokenizerStatuses.has(response.status))
                    this._tokenizers.remember(url, false);
                return null;
            }
            const reply = TokenizeReplySchema.safeParse(await response.json().catch(() => null));
            this._tokenizers.remember(url, reply.success);
            return reply.success ? reply.data.tokens.length : null;
        } catch {
            if (signal?.aborted === true)
                throw new CleanroomError("GENERATION_ABORTED", "The cloud request was stopped.");
            return null; // unreachable or too slow this time: estimated, and asked again next time
        }
    }

    /**
     * Streams one chat completion. `cacheSalt` (vLLM's field: a shared server keeps prefixes of
     * different salts apart in its cache) is sent unless the endpoint is known to refuse it; an
     * endpoint that refuses it with HTTP 400 is asked again at once without it, and remembered.
     */
    public async *streamChat(messages: CloudChatMessage[], {maxTokens, signal, cacheSalt}: {maxTokens: number, signal?: AbortSignal, cacheSalt?: string}): AsyncGenerator<CloudStreamEvent> {
        let received = false;
        const baseURL = this.endpoint.baseURL;
        let sendSalt = cacheSalt != null && this._cacheSalts.acceptsCacheSalt(baseURL) !== false;
        for (let attempt = 0; ; attempt++) {
            try {
                const stream = await (await this._client()).chat.completions.create({
                    model: this.endpoint.model,
                    messages,
                    max_tokens: maxTokens,
                    stream: true,
                    stream_options: {include_usage: true},
                    ...sendSalt ? {cache_salt: cacheSalt} : {}
                } as OpenAI.ChatCompletionCreateParamsStreaming, {signal});
                if (sendSalt)
                    this._cacheSalts.remember(baseURL, true);

                let finishReason: string | null = null;
                let model: string | null = null;
                let usage: {promptTokens: number, completionTokens: number} | null = null;
                for await (const chunk of stream) {
                    if (typeof chunk !== "object" || chunk == null || !Array.isArray(chunk.choices))
                        throw new CleanroomError("CLOUD_BAD_RESPONSE", "The cloud server sent a malformed stream event.");
                    model ??= typeof chunk.model === "string" ? chunk.model : null;
                    if (chunk.usage != null)
                        usage = {promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens};
                    for (const choice of chunk.choices) {
                        const text = choice.delta?.content;
                        if (typeof text === "string" && text.length > 0) {
                            received = true;
                            yield {type: "text", text};
                        }
                        if (choice.finish_reason != null)
                            finishReason = choice.finish_reason;
                    }
                }
                yield {type: "end", finishReason, model, usage};
                return;
            } catch (error) {
                if (signal?.aborted === true)
                    throw new CleanroomError("GENERATION_ABORTED", "The cloud request was stopped.");
                const Sdk = await loadOpenAiSdk();
                if (sendSalt && !received && refusesCacheSalt(Sdk, error)) {
                    this._cacheSalts.remember(baseURL, false);
                    sendSalt = false;
                    attempt--; // the same try again, without the field: not a retry
                    continue;
                }
                if (received || attempt >= this._retries || !isRetryable(Sdk, error))
                    throw toCloudError(Sdk, error, received);
                await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
            }
        }
    }
}

/** HTTP 400 (or 422) naming `cache_salt`: an endpoint that refuses fields it does not know (OpenAI: "Unrecognized request argument supplied"). */
function refusesCacheSalt(Sdk: typeof OpenAI, error: unknown) {
    return error instanceof Sdk.APIError && (error.status === 400 || error.status === 422) &&
        (error.param === "cache_salt" || /cache_salt/i.test(error.message));
}

function isRetryable(Sdk: typeof OpenAI, error: unknown) {
    if (error instanceof Sdk.APIConnectionError || error instanceof Sdk.APIConnectionTimeoutError)
        return true;
    if (error instanceof Sdk.APIError)
        return error.status == null || error.status >= 500 || error.status === 429;
    return false;
}

function toCloudError(Sdk: typeof OpenAI, error: unknown, received: boolean): CleanroomError {
    if (error instanceof CleanroomError)
        return error;
    if (error instanceof Sdk.APIConnectionTimeoutError)
        return new CleanroomError("CLOUD_REQUEST_FAILED", "The cloud server did not answer in time.", {timeout: true});
    if (error instanceof Sdk.APIError && error.status != null) {
        const overLimit = error.status === 400 && /context|too long|exceed/i.test(error.message);
        return new CleanroomError(overLimit ? "CLOUD_OVER_LIMIT" : "CLOUD_REQUEST_FAILED",
            `The cloud server answered HTTP ${error.status}${overLimit ? ": the request is over its context limit" : ""}.`,
            {status: error.status});
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new CleanroomError(received ? "CLOUD_BAD_RESPONSE" : "CLOUD_REQUEST_FAILED",
        received ? `The cloud reply broke off mid-stream (${reason}).` : `The cloud server could not be reached (${reason}).`,
        {receivedText: received});
}

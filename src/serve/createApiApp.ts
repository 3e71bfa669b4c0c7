import type {HttpBindings} from "@hono/node-server";
import {RESPONSE_ALREADY_SENT} from "@hono/node-server/utils/response";
import {Hono, type Context} from "hono";
import {bodyLimit} from "hono/body-limit";
import type {ApiAnswer, ApiRequestInput, ApiRequestResult, ApiRunCallbacks, Core, PreparedApiRequest} from "../core/node/Core.js";
import type {ApiEmbeddingResult} from "../core/node/turns/ApiEmbeddingService.js";
import {loopbackTenant, type ApiTenant} from "../core/node/turns/ApiRequestService.js";
import type {ApiKeyRing} from "./ApiKeyRing.js";
import {chatCompletionShape, finishReasonOf, textCompletionShape, usageOf, type CompletionShape} from "./completionShapes.js";
import {ChatCompletionBodySchema, CompletionBodySchema, textOfContent, type ChatCompletionBody, type CompletionBody} from "./openAiSchemas.js";
import {embeddingsRoute} from "./embeddingsRoute.js";
import {OpenAiHttpError} from "./OpenAiHttpError.js";
import {toHttpError} from "./toHttpError.js";
import {SseEventQueue} from "./SseEventQueue.js";
import {parseBody} from "./parseBody.js";
import {NodeSseResponse} from "./NodeSseResponse.js";
import {servedEndpoints} from "./servedEndpoints.js";

export type ApiAppOptions = {
    core: Core,
    /** The name the model is listed and asked for under: its file name without `.gguf`; null while no model is loaded (the app's server). */
    modelName: () => string | null,
    keys: ApiKeyRing,
    /** Requests served at once; one more is answered 429. */
    parallel: number,
    /** Whether a request needs a key; when none does, every client is the one tenant `loopback` and `allowedHosts` is checked. */
    keyRequired: () => boolean,
    /** The `Host` values accepted when no key is required (loopback only: no DNS rebinding). */
    allowedHosts: () => string[],
    /** Stops every request in flight (the server is shutting down). */
    shutdownSignal: AbortSignal,
    /** How long a `cache_salt` reuse cache is kept with no request using it, in ms. */
    cacheIdleMs: number,
    /** Called once per request that reached the model, answered or not. */
    onRequestEnd?: (report: ApiRequestReport) => void,
    /** Called once per embeddings request answered (its embedding context already scrubbed). `tenant` is the tenant's label. */
    onEmbedded?: (result: ApiEmbeddingResult, tenant: string) => void,
    /** Called when a streamed request's client disconnects before the end: its generation is being stopped. `tenant` is the tenant's label. */
    onClientLeft?: (requestId: string, tenant: string) => void
};

/** Node's request and response (`@hono/node-server`), and the tenant the key middleware found. */
type ApiEnv = {Bindings: HttpBindings, Variables: {tenant: ApiTenant}};

/** `tenant`: the tenant's label (see `ApiTenant`). */
export type ApiRequestReport = {requestId: string, tenant: string, result: ApiRequestResult | null, error: unknown};

/** Request bodies larger than this are refused (413) before they are read whole. */
const maxBodyBytes = 8 << 20;
/** What a 429 asks the client to wait, in seconds. */
const retryAfterSeconds = 1;

/**
 * The OpenAI-compatible routes of `cleanroom serve` (`GET /v1/models`, `POST /v1/chat/completions`,
 * `POST /v1/completions`, `POST /v1/embeddings`), every error in OpenAI's shape. Each request runs in a context of its own, scrubbed when it ends
 * (`Core.runApiRequest`); one that does not fit is refused before evaluation, one over `parallel`
 * is refused with 429 before anything is done.
 */
export function createApiApp(options: ApiAppOptions) {
    const {core, modelName, keys} = options;
    const app = new Hono<ApiEnv>();
    let running = 0;
    /** Requests in flight per `cache_salt` cache (tenant id and salt; in memory only): they run one at a time, so the whole queue holds one slot. */
    const cacheQueues = new Map<string, number>();
    const runs = new Set<Promise<unknown>>();

    app.onError((error, c) => errorResponse(c, toHttpError(error)));
    app.notFound((c) => errorResponse(c, new OpenAiHttpError(404, "invalid_request_error", `There is no route ${c.req.method} ${c.req.path}.`, {code: "not_found"})));

    app.use("*", async (c, next) => {
        const keyRequired = options.keyRequired();
        if (!keyRequired && !options.allowedHosts().includes(c.req.header("host") ?? ""))
            throw new OpenAiHttpError(403, "invalid_request_error",
                "This server accepts requests addressed to 127.0.0.1 or localhost only (the Host header names another host).", {code: "foreign_host"});
        const tenant = keyRequired ? keys.tenantOf(c.req.header("authorization")) : loopbackTenant;
        if (tenant == null)
            throw new OpenAiHttpError(401, "authentication_error", "Missing or wrong API key: send it as `Authorization: Bearer <key>`.", {code: "invalid_api_key"});
        c.set("tenant", tenant);
        await next();
    });

    // context_length: what one request's context holds (prompt + reply), as vLLM's max_model_len and LM Studio say it.
    app.get("/v1/models", (c) => {
        const name = modelName();
        const embeddingModel = core.apiEmbeddingModelName;
        return c.json({
            object: "list",
            data: [
                ...name == null ? [] : [{id: name, object: "model", created: 0, owned_by: "cleanroom", context_length: core.modelInfo()?.contextSize ?? null}],
                ...embeddingModel == null || embeddingModel === name ? [] : [{id: embeddingModel, object: "model", created: 0, owned_by: "cleanroom"}]
            ]
        });
    });

    const limitBody = bodyLimit({
        maxSize: maxBodyBytes,
        onError: () => {
            throw new OpenAiHttpError(413, "invalid_request_error", `The request body is larger than ${maxBodyBytes} bytes.`, {code: "request_too_large"});
        }
    });
    app.post("/v1/chat/completions", limitBody, async (c) => {
        const body = parseBody(await c.req.text(), ChatCompletionBodySchema);
        return await answer(c, body, {...chatInputOf(body, c.get("tenant")), ...reuseOf(body)}, chatCompletionShape, "messages");
    });
    app.post("/v1/completions", limitBody, async (c) => {
        const body = parseBody(await c.req.text(), CompletionBodySchema);
        return await answer(c, body, {...textInputOf(body, c.get("tenant")), ...reuseOf(body)}, textCompletionShape, "prompt");
    });

    app.post("/v1/embeddings", limitBody, embeddingsRoute(core, (tenant) => takeSlot({tenant}), options.onEmbedded));

    function reuseOf(body: ChatCompletionBody | CompletionBody): Pick<ApiRequestInput, "reuse"> {
        return body.cache_salt == null ? {} : {reuse: {salt: body.cache_salt, idleMs: options.cacheIdleMs}};
    }

    /** One completion of either kind: the model checked, a slot taken (or 429), the prompt checked to fit (or 400), then run and answered whole or streamed. */
    async function answer(c: Context<ApiEnv>, body: CommonBody, input: ApiRequestInput, shape: CompletionShape, promptParam: string) {
        const served = modelName();
        if (served == null)
            throw new OpenAiHttpError(503, "server_error", "No model is loaded in Cleanroom: load one in the app, then ask again.", {code: "model_not_loaded"});
        if (body.model !== served)
            throw new OpenAiHttpError(404, "invalid_request_error", `The model ${JSON.stringify(body.model)} does not exist here: this server serves ${JSON.stringify(served)}.`,
                {param: "model", code: "model_not_found"});
        const slot = takeSlot(input);
        let streaming = false;
        try {
            const prepared = await core.prepareApiRequest(input).catch((error: unknown) => {
                throw toHttpError(error, promptParam);
            });
            const created = Math.floor(Date.now() / 1000);
            const envelope = {id: `${shape.idPrefix}-${prepared.requestId.slice("api-".length)}`, created, model: served};
            if (body.stream !== true) {
                const result = await runReported(prepared, input.tenant, {signal: AbortSignal.any([c.req.raw.signal, options.shutdownSignal])});
                if (result.finishReason === "aborted")
                    throw new OpenAiHttpError(503, "server_error", "The request was stopped before it finished (the server is shutting down, or the client left).",
                        {code: "request_stopped"});
                return c.json({...envelope, object: shape.object, choices: [shape.whole(result.text, finishReasonOf(result))], usage: usageOf(result)});
            }
            streaming = true; // the stream gives its slot back when it ends
            const stream = new NodeSseResponse(c.env.outgoing);
            void (async () => {
                const cancel = new AbortController();
                const clientLeft = () => {
                    if (cancel.signal.aborted || options.shutdownSignal.aborted)
                        return;
                    cancel.abort();
                    options.onClientLeft?.(prepared.requestId, input.tenant.label);
                };
                c.req.raw.signal.addEventListener("abort", clientLeft, {once: true});
                c.env.outgoing.once("close", () => {
                    if (stream.aborted)
                        clientLeft();
                });
                const chunk = (choice: Record<string, unknown>) => JSON.stringify({...envelope, object: shape.chunkObject, choices: [choice]});
                const events = new SseEventQueue((text) => stream.write(text));
                try {
                    if (shape.opening != null)
                        events.push(chunk(shape.opening));
                    const result = await runReported(prepared, input.tenant, {
                        signal: AbortSignal.any([cancel.signal, options.shutdownSignal]),
                        onText: (text) => events.push(chunk(shape.text(text)))
                    });
                    if (result.finishReason === "aborted")
                        return;
                    events.push(chunk(shape.closing(finishReasonOf(result))));
                    if (body.stream_options?.include_usage === true)
                        events.push(JSON.stringify({...envelope, object: shape.chunkObject, choices: [], usage: usageOf(result)}));
                    events.push("[DONE]");
                    await events.flush();
                } catch (error) {
                    if (!stream.aborted) {
                        events.push(JSON.stringify(toHttpError(error, promptParam).toBody()));
                        await events.flush().catch(() => undefined);
                    }
                } finally {
                    slot.release();
                    stream.end();
                }
            })();
            return RESPONSE_ALREADY_SENT;
        } finally {
            if (!streaming)
                slot.release();
        }
    }

    /**
     * A slot for the request, or 429 with nothing done. Requests with the same key and `cache_salt`
     * run one after another in their cache: the first takes a slot, those that come while it runs
     * wait in its queue (at most `parallel` of them) and share that slot, handed on until the last leaves.
     * Taken synchronously with the checks: two requests cannot both take the last slot.
     */
    function takeSlot(input: Pick<ApiRequestInput, "tenant" | "reuse">): {release: () => void} {
        const cacheKey = input.reuse == null ? null : `${input.tenant.id}\0${input.reuse.salt}`;
        const queued = cacheKey == null ? 0 : cacheQueues.get(cacheKey) ?? 0;
        if (queued >= options.parallel)
            throw new OpenAiHttpError(429, "rate_limit_error",
                `${queued} requests with this cache_salt are already running or waiting (one at a time, at most --parallel ${options.parallel} queued); ` +
                `nothing of this request was done. Retry after ${retryAfterSeconds} s.`, {code: "rate_limit_exceeded", retryAfterSeconds});
        if (queued === 0 && running >= options.parallel)
            throw new OpenAiHttpError(429, "rate_limit_error",
                `All ${options.parallel} request slots are busy (--parallel ${options.parallel}); nothing of this request was done. Retry after ${retryAfterSeconds} s.`,
                {code: "rate_limit_exceeded", retryAfterSeconds});
        if (queued === 0)
            running++;
        if (cacheKey != null)
            cacheQueues.set(cacheKey, queued + 1);
        let released = false;
        return {
            release: () => {
                if (released)
                    return;
                released = true;
                const left = cacheKey == null ? 0 : cacheQueues.get(cacheKey)! - 1;
                if (cacheKey != null && left > 0)
                    cacheQueues.set(cacheKey, left);
                else {
                    if (cacheKey != null)
                        cacheQueues.delete(cacheKey);
                    running--;
                }
            }
        };
    }

    /**
     * Runs the request; resolves with its reply as soon as that is complete, while its context is
     * scrubbed (the run, reported once scrubbed, is awaited by `settled`). Rejects if the request
     * failed before its reply was complete.
     */
    function runReported(prepared: PreparedApiRequest, tenant: ApiTenant, callbacks: {signal: AbortSignal, onText?: (text: string) => void}): Promise<ApiAnswer> {
        let answered!: (answer: ApiAnswer) => void;
        const answer = new Promise<ApiAnswer>((resolve) => answered = resolve);
        const run = runAndReport(prepared, tenant, {...callbacks, onAnswered: answered});
        runs.add(run);
        void run.finally(() => runs.delete(run)).catch(() => undefined);
        return Promise.race([answer, run]);
    }

    async function runAndReport(prepared: PreparedApiRequest, tenant: ApiTenant, callbacks: ApiRunCallbacks) {
        try {
            const result = await core.runApiRequest(prepared, callbacks);
            options.onRequestEnd?.({requestId: prepared.requestId, tenant: tenant.label, result, error: null});
            return result;
        } catch (error) {
            options.onRequestEnd?.({requestId: prepared.requestId, tenant: tenant.label, result: null, error});
            throw error;
        }
    }

    return {
        app,
        /** Every endpoint it serves, `METHOD /path`, from its route table. */
        endpoints: servedEndpoints(app),
        /** Resolves once every request that reached the model has ended (its context scrubbed). */
        settled: async () => {
            await Promise.allSettled([...runs]);
        }
    };
}

type CommonBody = Pick<ChatCompletionBody, "model" | "stream" | "stream_options">;

/** What both kinds of request ask alike. */
function samplingOf(body: ChatCompletionBody | CompletionBody) {
    return {
        temperature: body.temperature ?? 1,
        topP: body.top_p ?? undefined,
        seed: body.seed ?? null,
        stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop
    };
}

function chatInputOf(body: ChatCompletionBody, tenant: ApiTenant): ApiRequestInput {
    return {
        tenant,
        source: {kind: "chat", messages: body.messages.map((message) => ({role: message.role === "developer" ? "system" : message.role, content: textOfContent(message.content)}))},
        maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
        ...samplingOf(body),
        json: jsonOf(body.response_format)
    };
}

/** OpenAI's default reply budget for `/v1/completions`. */
const defaultTextCompletionTokens = 16;

function textInputOf(body: CompletionBody, tenant: ApiTenant): ApiRequestInput {
    return {
        tenant,
        source: {kind: "text", prompt: typeof body.prompt === "string" ? body.prompt : body.prompt[0]},
        maxTokens: body.max_tokens ?? defaultTextCompletionTokens,
        ...samplingOf(body)
    };
}

/** What JSON the reply must be: any (`json_object`), matching a schema (`json_schema`; any JSON when it gives none), or none asked. */
function jsonOf(format: ChatCompletionBody["response_format"]): ApiRequestInput["json"] {
    if (format?.type === "json_object")
        return {schema: null};
    if (format?.type === "json_schema")
        return {schema: format.json_schema.schema ?? null};
    return undefined;
}

function errorResponse(c: Context, error: OpenAiHttpError) {
    if (error.retryAfterSeconds != null)
        c.header("Retry-After", String(error.retryAfterSeconds));
    return c.json(error.toBody(), error.status);
}

import {Hono, type Context} from "hono";
import {bodyLimit} from "hono/body-limit";
import {streamSSE} from "hono/streaming";
import {isCleanroomError} from "../core/common/errors.js";
import type {ApiRequestInput, ApiRequestResult, Core, PreparedApiRequest} from "../core/node/Core.js";
import type {ApiKeyRing} from "./ApiKeyRing.js";
import {ChatCompletionBodySchema, textOfContent, type ChatCompletionBody} from "./openAiSchemas.js";
import {OpenAiHttpError} from "./OpenAiHttpError.js";

export type ApiAppOptions = {
    core: Core,
    /** The name the model is listed and asked for under: its file name without `.gguf`. */
    modelName: string,
    keys: ApiKeyRing,
    /** Requests served at once; one more is answered 429. */
    parallel: number,
    /** The `Host` values accepted when there are no keys (loopback only: no DNS rebinding); null when keys guard the server. */
    allowedHosts: () => string[] | null,
    /** Stops every request in flight (the server is shutting down). */
    shutdownSignal: AbortSignal,
    /** Called once per request that reached the model, answered or not. */
    onRequestEnd?: (report: ApiRequestReport) => void,
    /** Called when a streamed request's client disconnects before the end: its generation is being stopped. */
    onClientLeft?: (requestId: string, tenant: string) => void
};

export type ApiRequestReport = {requestId: string, tenant: string, result: ApiRequestResult | null, error: unknown};

/** Request bodies larger than this are refused (413) before they are read whole. */
const maxBodyBytes = 8 << 20;
/** What a 429 asks the client to wait, in seconds. */
const retryAfterSeconds = 1;

/**
 * The OpenAI-compatible routes of `cleanroom serve` (`GET /v1/models`, `POST /v1/chat/completions`),
 * every error in OpenAI's shape. Each request runs in a context of its own, scrubbed when it ends
 * (`Core.runApiRequest`); one that does not fit is refused before evaluation, one over `parallel`
 * is refused with 429 before anything is done.
 */
export function createApiApp(options: ApiAppOptions) {
    const {core, modelName, keys} = options;
    const app = new Hono<{Variables: {tenant: string}}>();
    let running = 0;
    const runs = new Set<Promise<unknown>>();

    app.onError((error, c) => errorResponse(c, toHttpError(error)));
    app.notFound((c) => errorResponse(c, new OpenAiHttpError(404, "invalid_request_error", `There is no route ${c.req.method} ${c.req.path}.`, {code: "not_found"})));

    app.use("*", async (c, next) => {
        const hosts = options.allowedHosts();
        if (hosts != null && !hosts.includes(c.req.header("host") ?? ""))
            throw new OpenAiHttpError(403, "invalid_request_error",
                "This server accepts requests addressed to 127.0.0.1 or localhost only (the Host header names another host).", {code: "foreign_host"});
        const tenant = keys.size === 0 ? "loopback" : keys.tenantOf(c.req.header("authorization"));
        if (tenant == null)
            throw new OpenAiHttpError(401, "authentication_error", "Missing or wrong API key: send it as `Authorization: Bearer <key>`.", {code: "invalid_api_key"});
        c.set("tenant", tenant);
        await next();
    });

    // context_length: what one request's context holds (prompt + reply), as vLLM's max_model_len and LM Studio say it.
    app.get("/v1/models", (c) => c.json({
        object: "list",
        data: [{id: modelName, object: "model", created: 0, owned_by: "cleanroom", context_length: core.modelInfo()?.contextSize ?? null}]
    }));

    app.post("/v1/chat/completions", bodyLimit({
        maxSize: maxBodyBytes,
        onError: () => {
            throw new OpenAiHttpError(413, "invalid_request_error", `The request body is larger than ${maxBodyBytes} bytes.`, {code: "request_too_large"});
        }
    }), async (c) => {
        const body = parseBody(await c.req.text());
        if (body.model !== modelName)
            throw new OpenAiHttpError(404, "invalid_request_error", `The model ${JSON.stringify(body.model)} does not exist here: this server serves ${JSON.stringify(modelName)}.`,
                {param: "model", code: "model_not_found"});
        if (running >= options.parallel)
            throw new OpenAiHttpError(429, "rate_limit_error",
                `All ${options.parallel} request slots are busy (--parallel ${options.parallel}); nothing of this request was done. Retry after ${retryAfterSeconds} s.`,
                {code: "rate_limit_exceeded", retryAfterSeconds});
        const tenant = c.get("tenant");
        // Counted from here, synchronously with the check above: two requests cannot both take the last slot.
        running++;
        let released = false;
        const release = () => {
            if (!released)
                running--;
            released = true;
        };
        try {
            const prepared = await core.prepareApiRequest(requestInputOf(body, tenant));
            const created = Math.floor(Date.now() / 1000);
            const id = `chatcmpl-${prepared.requestId.slice("api-".length)}`;
            if (body.stream !== true) {
                const result = await runReported(prepared, tenant, {signal: AbortSignal.any([c.req.raw.signal, options.shutdownSignal])});
                if (result.finishReason === "aborted")
                    throw new OpenAiHttpError(503, "server_error", "The request was stopped before it finished (the server is shutting down, or the client left).",
                        {code: "request_stopped"});
                return c.json({
                    id, object: "chat.completion", created, model: modelName,
                    choices: [{index: 0, message: {role: "assistant", content: result.text}, finish_reason: finishReasonOf(result), logprobs: null}],
                    usage: usageOf(result)
                });
            }
            released = true; // the stream releases its slot when it ends
            return streamSSE(c, async (stream) => {
                const cancel = new AbortController();
                const clientLeft = () => {
                    if (cancel.signal.aborted || options.shutdownSignal.aborted)
                        return;
                    cancel.abort();
                    options.onClientLeft?.(prepared.requestId, tenant);
                };
                stream.onAbort(clientLeft);
                c.req.raw.signal.addEventListener("abort", clientLeft, {once: true});
                const chunk = (delta: Record<string, string>, finishReason: string | null) => ({
                    id, object: "chat.completion.chunk", created, model: modelName, choices: [{index: 0, delta, finish_reason: finishReason, logprobs: null}]
                });
                try {
                    await stream.writeSSE({data: JSON.stringify(chunk({role: "assistant", content: ""}, null))});
                    const result = await runReported(prepared, tenant, {
                        signal: AbortSignal.any([cancel.signal, options.shutdownSignal]),
                        onText: (text) => void stream.writeSSE({data: JSON.stringify(chunk({content: text}, null))})
                    });
                    if (result.finishReason === "aborted")
                        return;
                    await stream.writeSSE({data: JSON.stringify(chunk({}, finishReasonOf(result)))});
                    if (body.stream_options?.include_usage === true)
                        await stream.writeSSE({data: JSON.stringify({id, object: "chat.completion.chunk", created, model: modelName, choices: [], usage: usageOf(result)})});
                    await stream.writeSSE({data: "[DONE]"});
                } catch (error) {
                    if (!stream.aborted)
                        await stream.writeSSE({data: JSON.stringify(toHttpError(error).toBody())});
                } finally {
                    running--;
                }
            }, async () => undefined);
        } finally {
            release();
        }
    });

    function runReported(prepared: PreparedApiRequest, tenant: string, callbacks: {signal: AbortSignal, onText?: (text: string) => void}) {
        const run = runAndReport(prepared, tenant, callbacks);
        runs.add(run);
        void run.finally(() => runs.delete(run)).catch(() => undefined);
        return run;
    }

    async function runAndReport(prepared: PreparedApiRequest, tenant: string, callbacks: {signal: AbortSignal, onText?: (text: string) => void}) {
        try {
            const result = await core.runApiRequest(prepared, callbacks);
            options.onRequestEnd?.({requestId: prepared.requestId, tenant, result, error: null});
            return result;
        } catch (error) {
            options.onRequestEnd?.({requestId: prepared.requestId, tenant, result: null, error});
            throw error;
        }
    }

    return {
        app,
        /** Resolves once every request that reached the model has ended (its context scrubbed). */
        settled: async () => {
            await Promise.allSettled([...runs]);
        }
    };
}

function parseBody(text: string): ChatCompletionBody {
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch {
        throw new OpenAiHttpError(400, "invalid_request_error", "The request body is not valid JSON.", {code: "invalid_json"});
    }
    const parsed = ChatCompletionBodySchema.safeParse(json);
    if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const param = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
        throw new OpenAiHttpError(400, "invalid_request_error", `${param ?? "The body"}: ${issue.message}.`, {param, code: "invalid_value"});
    }
    return parsed.data;
}

function requestInputOf(body: ChatCompletionBody, tenant: string): ApiRequestInput {
    return {
        tenant,
        messages: body.messages.map((message) => ({role: message.role === "developer" ? "system" : message.role, content: textOfContent(message.content)})),
        maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
        temperature: body.temperature ?? 1,
        topP: body.top_p ?? undefined,
        seed: body.seed ?? null,
        stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
        json: jsonOf(body.response_format)
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

function finishReasonOf(result: ApiRequestResult) {
    return result.finishReason === "length" ? "length" : "stop";
}

/** `cached_tokens` is always 0: every request starts in a fresh context, so no prompt is ever served from another's cache. */
function usageOf(result: ApiRequestResult) {
    return {
        prompt_tokens: result.promptTokens,
        completion_tokens: result.completionTokens,
        total_tokens: result.promptTokens + result.completionTokens,
        prompt_tokens_details: {cached_tokens: result.cachedTokens}
    };
}

function toHttpError(error: unknown): OpenAiHttpError {
    if (error instanceof OpenAiHttpError)
        return error;
    if (isCleanroomError(error, "CONTEXT_OVERFLOW"))
        return new OpenAiHttpError(400, "invalid_request_error", error.message, {param: "messages", code: "context_length_exceeded"});
    if (isCleanroomError(error, "INVALID_INPUT"))
        return new OpenAiHttpError(400, "invalid_request_error", error.message, {param: typeof error.details.param === "string" ? error.details.param : null, code: "invalid_value"});
    if (isCleanroomError(error, "MODEL_NOT_LOADED"))
        return new OpenAiHttpError(503, "server_error", error.message, {code: "model_not_loaded"});
    if (isCleanroomError(error, "SCRUB_UNVERIFIED"))
        return new OpenAiHttpError(500, "server_error", error.message, {code: "scrub_unverified"});
    return new OpenAiHttpError(500, "server_error", `The request failed: ${error instanceof Error ? error.message : String(error)}`,
        {code: isCleanroomError(error, "INTERNAL") ? "internal_error" : null});
}

function errorResponse(c: Context, error: OpenAiHttpError) {
    if (error.retryAfterSeconds != null)
        c.header("Retry-After", String(error.retryAfterSeconds));
    return c.json(error.toBody(), error.status);
}

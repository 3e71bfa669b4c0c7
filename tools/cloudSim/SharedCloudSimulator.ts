import http from "node:http";
import type {AddressInfo, Socket} from "node:net";
import {plantCanaries} from "../../src/core/common/cloud/plantCanaries.js";
import {fillerText} from "../endpointAudit/fillerText.js";
import {mangleText} from "./mangleText.js";
import {PagePool, type StaleRun} from "./PagePool.js";
import {SeededRandom} from "./SeededRandom.js";
import {LlamaSimTextModel, SyntheticSimTextModel, type SimTextModel} from "./SimTextModel.js";
import {
    simFaults, simModes, type SharedCloudSimulatorOptions, type SimFault, type SimLeak, type SimMode, type SimReceivedRequest, type SimRequestRecord
} from "./types.js";

const defaultPort = 0;
const defaultSeed = 1;
const defaultPoolTokens = 4096;
const defaultPageTokens = 64;
const defaultLeakRate = 0.1;
const defaultLeakPages = 4;
const defaultLeakFragments = 2;
const defaultTruncateAboveTokens = 256;
const defaultTruncateKeepRatio = 0.4;
const defaultFaults = simFaults.filter((fault) => fault !== "none");
const defaultStallMs = 30_000;
const defaultModelName = "cleanroom-sim";
const defaultMaxTokens = 64;
/** The incident: configured for about 1M tokens of context, KV memory for about 681K. */
const incidentOvercommit = 1_000_000 / 681_000;
/** Tokens a chat template adds per message, and to prime the reply (as OpenAI counts them). */
const tokensPerMessage = 4;
const tokensForReplyPriming = 3;
const maxBodyBytes = 16 << 20;
const defaultOtherTenants = 0;
/** Share of the KV memory the other tenants' requests fill at start. */
const otherTenantsPoolShare = 0.5;
/** Canary density of the other tenants' requests: any page of theirs that leaks carries one. */
const otherTenantCharsPerCanary = 100;

type ChatMessage = {role: string, content: string};

type ParsedRequest = {
    messages: ChatMessage[],
    maxTokens: number,
    stream: boolean,
    includeUsage: boolean,
    cacheSalt: string | null
};

type PreparedReply = {
    text: string,
    finishReason: "stop" | "length",
    promptTokens: number,
    reportedPromptTokens: number,
    completionTokens: number
};

class HttpFailure extends Error {
    public readonly status: number;
    public readonly type: string;
    public readonly errorCode: string | null;
    public readonly param: string | null;

    public constructor(status: number, type: string, errorCode: string | null, message: string, param: string | null = null) {
        super(message);
        this.name = "HttpFailure";
        this.status = status;
        this.type = type;
        this.errorCode = errorCode;
        this.param = param;
    }
}

/**
 * An OpenAI-compatible, multi-tenant chat server on 127.0.0.1 that shares one KV page pool
 * between tenants (tenant = bearer API key), and reproduces the October 2026 shared-cloud
 * incident and other faults on demand. Test infrastructure and demo aid, never a product
 * path. Requests are served one at a time (one model sequence); streaming and stalls do not
 * hold up the queue.
 *
 * Generation conditions on the last message only (the test model is a story model, not a
 * chat model); usage and KV pages account for the whole prompt.
 *
 * Routes (any non-empty bearer key; each key is one tenant): `GET /v1/models`,
 * `POST /v1/chat/completions`, and `POST /tokenize` (`{"content"}` → `{"tokens"}`, as llama.cpp's
 * llama-server), which counts exactly as the usage it reports.
 */
export class SharedCloudSimulator {
    /** Base URL including `/v1`, as the OpenAI SDK's `baseURL` expects. */
    public readonly url: string;
    public readonly mode: SimMode;
    public readonly advertisedContext: number;
    public readonly poolTokens: number;
    public readonly modelName: string;
    /** Tenants whose requests were in the shared KV memory from the start (`other-tenant-1`, …). */
    public readonly otherTenants: number;
    /** One record per chat request, in arrival order. */
    public readonly requests: SimRequestRecord[] = [];
    /** Every HTTP request received (chat, `/tokenize`, `/v1/models`, refused ones too), with its raw body, in arrival order. */
    public readonly received: SimReceivedRequest[] = [];
    private readonly _server: http.Server;
    private readonly _model: SimTextModel;
    private readonly _pool: PagePool;
    private readonly _random: SeededRandom;
    private readonly _options: Required<Omit<SharedCloudSimulatorOptions, "modelPath" | "advertisedContext">>;
    private readonly _sockets = new Set<Socket>();
    private readonly _timers = new Set<NodeJS.Timeout>();
    private _queue: Promise<unknown> = Promise.resolve();
    private _requestCounter = 0;
    private _faultCursor: number;
    private _closed: Promise<void> | null = null;

    private constructor(server: http.Server, model: SimTextModel, options: SharedCloudSimulatorOptions) {
        this._server = server;
        this._model = model;
        this.mode = options.mode;
        this._options = {
            mode: options.mode,
            port: options.port ?? defaultPort,
            seed: options.seed ?? defaultSeed,
            poolTokens: options.poolTokens ?? defaultPoolTokens,
            pageTokens: options.pageTokens ?? defaultPageTokens,
            leakRate: options.leakRate ?? defaultLeakRate,
            leakPages: options.leakPages ?? defaultLeakPages,
            leakFragments: options.leakFragments ?? defaultLeakFragments,
            truncateAboveTokens: options.truncateAboveTokens ?? defaultTruncateAboveTokens,
            truncateKeepRatio: options.truncateKeepRatio ?? defaultTruncateKeepRatio,
            faults: options.faults ?? defaultFaults,
            stallMs: options.stallMs ?? defaultStallMs,
            modelName: options.modelName ?? defaultModelName,
            defaultMaxTokens: options.defaultMaxTokens ?? defaultMaxTokens,
            reply: options.reply ?? "generate",
            otherTenants: options.otherTenants ?? defaultOtherTenants,
            cacheSalt: options.cacheSalt ?? "accept"
        };
        this.poolTokens = this._options.poolTokens;
        this.modelName = this._options.modelName;
        const advertised = options.advertisedContext ??
            (options.mode === "incident" ? Math.round(this.poolTokens * incidentOvercommit) : this.poolTokens);
        this.advertisedContext = options.mode === "honest" ? Math.min(advertised, this.poolTokens) : advertised;
        this._pool = new PagePool(Math.max(1, Math.floor(this.poolTokens / this._options.pageTokens)));
        this._random = new SeededRandom(this._options.seed);
        this._faultCursor = this._options.seed;
        this.otherTenants = Math.max(0, Math.floor(this._options.otherTenants));
        this._seedOtherTenants();
        const address = server.address() as AddressInfo;
        this.url = `http://127.0.0.1:${address.port}/v1`;

        server.on("connection", (socket) => {
            this._sockets.add(socket);
            socket.on("close", () => this._sockets.delete(socket));
        });
        server.on("request", (request, response) => void this._handle(request, response));
    }

    public static async start(options: SharedCloudSimulatorOptions): Promise<SharedCloudSimulator> {
        if (!simModes.includes(options.mode))
            throw new RangeError(`Unknown simulator mode "${options.mode}" (one of ${simModes.join(", ")})`);
        const model = options.modelPath != null
            ? await LlamaSimTextModel.load(options.modelPath)
            : new SyntheticSimTextModel(options.seed ?? defaultSeed);
        const server = http.createServer();
        try {
            await new Promise<void>((resolve, reject) => {
                server.once("error", reject);
                server.listen(options.port ?? defaultPort, "127.0.0.1", () => {
                    server.off("error", reject);
                    resolve();
                });
            });
        } catch (error) {
            await model.dispose();
            throw error;
        }
        return new SharedCloudSimulator(server, model, options);
    }

    /** Token count as this server counts (the model's tokenizer, or the synthetic estimate). */
    public countTokens(text: string) {
        return this._model.countTokens(text);
    }

    /** `"llama"`: the GGUF model's tokenizer and generation; `"synthetic"`: the model-free stand-in. */
    public get textModel(): "llama" | "synthetic" {
        return this._model.kind;
    }

    /** Stops listening, cuts open connections (stalls included) and unloads the model. */
    public close(): Promise<void> {
        this._closed ??= (async () => {
            for (const timer of this._timers)
                clearTimeout(timer);
            this._timers.clear();
            const closing = new Promise<void>((resolve) => this._server.close(() => resolve()));
            for (const socket of this._sockets)
                socket.destroy();
            await closing;
            await this._queue.catch(() => undefined);
            await this._model.dispose();
        })();
        return this._closed;
    }

    private async _handle(request: http.IncomingMessage, response: http.ServerResponse) {
        try {
            const url = new URL(request.url ?? "/", "http://127.0.0.1");
            const body = await readBody(request);
            this.received.push({method: request.method ?? "", path: url.pathname, body});
            const tenant = bearerToken(request.headers.authorization);
            if (tenant == null)
                throw new HttpFailure(401, "invalid_request_error", "invalid_api_key", "Missing or malformed Authorization: Bearer <key>.");

            if (request.method === "GET" && (url.pathname === "/v1/models" || url.pathname === `/v1/models/${this.modelName}`)) {
                const model = {
                    id: this.modelName, object: "model", created: 0, owned_by: "cleanroom-sim",
                    context_length: this.advertisedContext, max_model_len: this.advertisedContext
                };
                sendJson(response, 200, url.pathname === "/v1/models" ? {object: "list", data: [model]} : model);
                return;
            }
            if (url.pathname === "/tokenize" && request.method === "POST") {
                sendJson(response, 200, {tokens: this._model.tokenize(tokenizeContent(parseJson(body)))});
                return;
            }
            if (url.pathname !== "/v1/chat/completions")
                throw new HttpFailure(404, "invalid_request_error", "not_found", `No route ${request.method} ${url.pathname}.`);
            if (request.method !== "POST")
                throw new HttpFailure(405, "invalid_request_error", "method_not_allowed", "Use POST.");

            await this._chat(tenant, parseJson(body), response);
        } catch (error) {
            if (response.headersSent) {
                response.destroy();
                return;
            }
            const failure = error instanceof HttpFailure
                ? error
                : new HttpFailure(500, "server_error", null, error instanceof Error ? error.message : String(error));
            sendJson(response, failure.status, {
                error: {message: failure.message, type: failure.type, param: failure.param, code: failure.errorCode}
            });
        }
    }

    private async _chat(tenant: string, body: unknown, response: http.ServerResponse) {
        const parsed = this._parseChatRequest(body);
        const requestId = `req-${++this._requestCounter}`;
        const record: SimRequestRecord = {
            requestId, tenant, status: 200, stream: parsed.stream, promptTokens: 0, reportedPromptTokens: null,
            maxTokens: parsed.maxTokens, overflowed: false, truncated: false, fault: null, leaks: [], cacheSalt: parsed.cacheSalt
        };
        this.requests.push(record);

        if (this.mode === "faulty") {
            const faults = this._options.faults;
            record.fault = faults.length > 0 ? faults[this._faultCursor++ % faults.length]! : "none";
            if (record.fault === "server-error") {
                record.status = this._random.pick([500, 502, 503]);
                throw new HttpFailure(record.status, "server_error", null, "The server had an error while processing your request.");
            }
            if (record.fault === "stall") {
                this._stall(response, parsed.stream);
                return;
            }
        }

        try {
            const reply = await this._enqueue(() => this._prepareReply(tenant, requestId, parsed, record));
            const id = `chatcmpl-sim-${this._options.seed}-${this._requestCounter}`;
            if (parsed.stream)
                await this._streamReply(response, id, parsed, reply, record.fault);
            else
                this._sendReply(response, id, reply, record.fault);
        } catch (error) {
            if (error instanceof HttpFailure)
                record.status = error.status;
            throw error;
        }
    }

    private _parseChatRequest(body: unknown): ParsedRequest {
        if (typeof body !== "object" || body === null)
            throw new HttpFailure(400, "invalid_request_error", null, "The body must be a JSON object.");
        const request = body as Record<string, unknown>;
        if (request.model !== this.modelName)
            throw new HttpFailure(404, "invalid_request_error", "model_not_found", `The model "${String(request.model)}" does not exist.`, "model");
        if (!Array.isArray(request.messages) || request.messages.length === 0)
            throw new HttpFailure(400, "invalid_request_error", null, "messages must be a non-empty array.", "messages");

        const messages = request.messages.map((message: unknown, index): ChatMessage => {
            const {role, content} = (message ?? {}) as {role?: unknown, content?: unknown};
            if (typeof role !== "string")
                throw new HttpFailure(400, "invalid_request_error", null, `messages[${index}].role must be a string.`, "messages");
            if (typeof content === "string")
                return {role, content};
            if (Array.isArray(content))
                return {role, content: content.map((part: {text?: unknown}) => typeof part?.text === "string" ? part.text : "").join("")};
            throw new HttpFailure(400, "invalid_request_error", null, `messages[${index}].content must be a string or parts.`, "messages");
        });

        const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? this._options.defaultMaxTokens;
        if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1)
            throw new HttpFailure(400, "invalid_request_error", null, "max_tokens must be a positive integer.", "max_tokens");
        const streamOptions = request.stream_options as {include_usage?: unknown} | undefined;
        if (request.cache_salt != null && this._options.cacheSalt === "reject")
            throw new HttpFailure(400, "invalid_request_error", null, "Unrecognized request argument supplied: cache_salt", "cache_salt");
        if (request.cache_salt != null && (typeof request.cache_salt !== "string" || request.cache_salt === ""))
            throw new HttpFailure(400, "invalid_request_error", null, "cache_salt must be a non-empty string.", "cache_salt");
        return {
            messages, maxTokens, stream: request.stream === true, includeUsage: streamOptions?.include_usage === true,
            cacheSalt: typeof request.cache_salt === "string" ? request.cache_salt : null
        };
    }

    private async _prepareReply(tenant: string, requestId: string, request: ParsedRequest, record: SimRequestRecord): Promise<PreparedReply> {
        const {promptText, promptTokens} = this._promptOf(request.messages);
        record.promptTokens = promptTokens;

        const needed = promptTokens + request.maxTokens;
        if (needed > this.advertisedContext || (needed > this.poolTokens && this.mode !== "incident")) {
            const limit = Math.min(this.advertisedContext, this.mode === "incident" ? Infinity : this.poolTokens);
            throw new HttpFailure(400, "invalid_request_error", "context_length_exceeded",
                `This model's maximum context length is ${limit} tokens. However, you requested ${needed} tokens ` +
                `(${promptTokens} in the messages, ${request.maxTokens} in the completion). ` +
                "Please reduce the length of the messages or completion.", "messages");
        }

        let reportedPromptTokens = promptTokens;
        let pageText = promptText;
        if (this.mode === "truncate" && promptTokens > this._options.truncateAboveTokens) {
            reportedPromptTokens = Math.max(1, Math.ceil(promptTokens * this._options.truncateKeepRatio));
            pageText = promptText.slice(promptText.length - Math.ceil(promptText.length * this._options.truncateKeepRatio));
            record.truncated = true;
        }
        record.reportedPromptTokens = reportedPromptTokens;

        const pageTokens = this._options.pageTokens;
        const slices = this._slicesOf(pageText, reportedPromptTokens);
        const leaks: Array<{run: StaleRun, mangled: boolean}> = [];
        if (this.mode === "incident" && needed > this.poolTokens) {
            // Did not fit, and was not refused: the part that overflowed maps onto stale pages,
            // which are read instead of written.
            record.overflowed = true;
            const overflowPages = Math.min(Math.ceil(needed / pageTokens) - this._pool.capacity, this._pool.capacity - 1);
            const aliased = this._pool.mostRecentStale(Math.max(1, overflowPages), requestId);
            this._pool.write(tenant, requestId, slices, new Set(aliased.map((page) => page.index)));
            const runs = PagePool.runsOf(aliased)
                .sort((a, b) => lastWrite(b) - lastWrite(a))
                .slice(0, this._options.leakFragments);
            for (const run of runs)
                leaks.push({run: this._trimRun(run), mangled: false});
        } else {
            if ((this.mode === "random-leak" || this.mode === "paraphrase") && this._random.chance(this._options.leakRate)) {
                const runs = this._pool.staleRuns(requestId);
                if (runs.length > 0)
                    leaks.push({run: this._trimRun(this._random.pick(runs)), mangled: this.mode === "paraphrase"});
            }
            this._pool.write(tenant, requestId, slices);
        }

        const lastMessage = request.messages[request.messages.length - 1]!.content;
        const generation = this._options.reply === "echo"
            ? {text: `You said: ${lastMessage}`, tokens: this._model.countTokens(`You said: ${lastMessage}`), finishReason: "stop" as const}
            : await this._model.generate(lastMessage, request.maxTokens);
        let text = generation.text;
        let completionTokens = generation.tokens;
        for (const {run, mangled} of leaks) {
            const fragment = mangled ? mangleText(run.text, this._random) : run.text;
            completionTokens += this._model.countTokens(` ${fragment} `);
            const at = this._random.int(text.length + 1);
            text = `${text.slice(0, at)} ${fragment} ${text.slice(at)}`;
            record.leaks.push({tenant: run.tenant, requestId: run.requestId, pages: run.pages.length, mangled, sourceText: run.text} satisfies SimLeak);
        }

        if (this.mode === "honest")
            this._pool.zero(requestId);

        return {
            text,
            finishReason: generation.finishReason,
            promptTokens,
            reportedPromptTokens,
            completionTokens
        };
    }

    /** The prompt as it sits in KV memory, and its tokens as this server counts them (as OpenAI does: per message, plus priming). */
    private _promptOf(messages: readonly ChatMessage[]) {
        return {
            promptText: messages.map((message) => `${message.role}: ${message.content}`).join("\n"),
            promptTokens: messages.reduce((sum, message) => sum + this._model.countTokens(message.content) + tokensPerMessage, tokensForReplyPriming)
        };
    }

    /** The text cut into one slice per KV page its tokens take. */
    private _slicesOf(text: string, tokens: number) {
        return sliceText(text, Math.max(1, Math.ceil(tokens / this._options.pageTokens)));
    }

    /**
     * Writes one earlier request of each other tenant into the KV memory (half of it in all):
     * private-looking text with canaries of another install. Seeded, like every other choice.
     */
    private _seedOtherTenants() {
        if (this.otherTenants === 0)
            return;
        const random = new SeededRandom(this._options.seed ^ 0x0e7e4a11);
        const tokensEach = Math.max(this._options.pageTokens, Math.floor(this.poolTokens * otherTenantsPoolShare / this.otherTenants));
        const sample = fillerText(() => random.next(), 2000);
        const charsPerToken = sample.length / Math.max(1, this._model.countTokens(sample));
        for (let index = 1; index <= this.otherTenants; index++) {
            const tenant = `other-tenant-${index}`;
            const {messages} = plantCanaries([
                {role: "system", content: `You are the assistant of ${tenant}.`},
                {role: "user", content: fillerText(() => random.next(), Math.floor(tokensEach * charsPerToken))}
            ], {charsPerCanary: otherTenantCharsPerCanary, randomBytes: (bytes) => random.fillBytes(bytes)});
            const {promptText, promptTokens} = this._promptOf(messages);
            this._pool.write(tenant, `${tenant}-earlier`, this._slicesOf(promptText, promptTokens));
        }
    }

    /** At most `leakPages` consecutive pages of the run, from a seeded start. */
    private _trimRun(run: StaleRun): StaleRun {
        const length = Math.min(run.pages.length, this._options.leakPages);
        const start = this._random.int(run.pages.length - length + 1);
        const pages = run.pages.slice(start, start + length);
        return {...run, pages, text: pages.map((page) => page.text).join("")};
    }

    private _sendReply(response: http.ServerResponse, id: string, reply: PreparedReply, fault: SimFault | null) {
        const body = JSON.stringify({
            id, object: "chat.completion", created: nowSeconds(), model: this.modelName, system_fingerprint: "fp_cleanroom_sim",
            choices: [{index: 0, message: {role: "assistant", content: reply.text, refusal: null}, logprobs: null, finish_reason: reply.finishReason}],
            usage: usageOf(reply)
        });
        if (fault === "cut-stream") {
            response.writeHead(200, {"content-type": "application/json", "content-length": String(Buffer.byteLength(body))});
            response.write(body.slice(0, Math.floor(body.length / 2)));
            setImmediate(() => response.destroy());
            return;
        }
        if (fault === "malformed-event") {
            const broken = body.slice(0, Math.floor(body.length * 0.6));
            response.writeHead(200, {"content-type": "application/json", "content-length": String(Buffer.byteLength(broken))});
            response.end(broken);
            return;
        }
        response.writeHead(200, {"content-type": "application/json", "content-length": String(Buffer.byteLength(body))});
        response.end(body);
    }

    private async _streamReply(response: http.ServerResponse, id: string, request: ParsedRequest, reply: PreparedReply, fault: SimFault | null) {
        response.writeHead(200, {"content-type": "text/event-stream", "cache-control": "no-cache", "connection": "keep-alive"});
        const created = nowSeconds();
        const chunk = (delta: object, finishReason: string | null) => ({
            id, object: "chat.completion.chunk", created, model: this.modelName, system_fingerprint: "fp_cleanroom_sim",
            choices: [{index: 0, delta, logprobs: null, finish_reason: finishReason}],
            ...(request.includeUsage ? {usage: null} : {})
        });
        const send = (data: unknown) => response.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);

        const pieces: string[] = [];
        for (let at = 0; at < reply.text.length;) {
            const size = this._random.between(1, 12);
            pieces.push(reply.text.slice(at, at + size));
            at += size;
        }
        const cutAt = fault === "cut-stream" ? Math.floor(pieces.length / 2) : -1;
        const malformAt = fault === "malformed-event" ? Math.min(2, pieces.length) : -1;

        send(chunk({role: "assistant", content: ""}, null));
        for (let index = 0; index < pieces.length; index++) {
            if (response.destroyed)
                return;
            if (index === cutAt) {
                response.destroy();
                return;
            }
            if (index === malformAt) {
                send(`{"id":"${id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`);
                send({id, object: "chat.completion.chunk", created, model: this.modelName});
                response.write("event: nonsense\ndata\n\n");
            }
            send(chunk({content: pieces[index]}, null));
            await new Promise<void>((resolve) => setImmediate(resolve));
        }
        if (cutAt === 0) {
            response.destroy();
            return;
        }
        send(chunk({}, reply.finishReason));
        if (request.includeUsage)
            send({id, object: "chat.completion.chunk", created, model: this.modelName, choices: [], usage: usageOf(reply)});
        send("[DONE]");
        response.end();
    }

    private _stall(response: http.ServerResponse, stream: boolean) {
        if (stream) {
            response.writeHead(200, {"content-type": "text/event-stream", "cache-control": "no-cache"});
            response.write(": stalled\n\n");
        }
        const timer = setTimeout(() => {
            this._timers.delete(timer);
            response.destroy();
        }, this._options.stallMs);
        this._timers.add(timer);
        response.on("close", () => {
            clearTimeout(timer);
            this._timers.delete(timer);
        });
    }

    private _enqueue<T>(work: () => Promise<T>): Promise<T> {
        const result = this._queue.then(work, work);
        this._queue = result.catch(() => undefined);
        return result;
    }
}

/** `{"content": "..."}`, as llama-server's `POST /tokenize` takes it. */
function tokenizeContent(body: unknown): string {
    const content = (body as {content?: unknown} | null)?.content;
    if (typeof content !== "string")
        throw new HttpFailure(400, "invalid_request_error", null, "POST /tokenize takes {\"content\": \"<text>\"}.", "content");
    return content;
}

function bearerToken(header: string | undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    return match?.[1] ?? null;
}

async function readBody(request: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
        size += (chunk as Buffer).length;
        if (size > maxBodyBytes)
            throw new HttpFailure(413, "invalid_request_error", null, `The body exceeds ${maxBodyBytes} bytes.`);
        chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString("utf8");
}

function parseJson(body: string): unknown {
    try {
        return JSON.parse(body);
    } catch {
        throw new HttpFailure(400, "invalid_request_error", null, "The body is not valid JSON.");
    }
}

function sendJson(response: http.ServerResponse, status: number, value: unknown) {
    const body = JSON.stringify(value);
    response.writeHead(status, {"content-type": "application/json", "content-length": String(Buffer.byteLength(body))});
    response.end(body);
}

function usageOf(reply: PreparedReply) {
    return {
        prompt_tokens: reply.reportedPromptTokens,
        completion_tokens: reply.completionTokens,
        total_tokens: reply.reportedPromptTokens + reply.completionTokens
    };
}

/** Splits text into `count` consecutive slices of near-equal length. */
function sliceText(text: string, count: number) {
    const slices: string[] = [];
    for (let index = 0; index < count; index++)
        slices.push(text.slice(Math.floor(index * text.length / count), Math.floor((index + 1) * text.length / count)));
    return slices;
}

function lastWrite(run: StaleRun) {
    return Math.max(...run.pages.map((page) => page.writtenAt));
}

function nowSeconds() {
    return Math.floor(Date.now() / 1000);
}

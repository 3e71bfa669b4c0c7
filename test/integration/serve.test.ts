import {type AuditKind, isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import http from "node:http";
import OpenAI, {APIError} from "openai";
import {afterEach, describe, expect, it} from "vitest";
import {createCanary} from "../../src/core/common/cloud/canary.js";
import type {AuditEvent} from "../../src/core/common/types.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {openTestCore} from "../helpers/coreServices.js";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const modelName = "stories260K";
/** `--import`ed into a serve run of the test build (testBuild.ts): every generation waits after its first token for a line on stdin. */
const holdGeneration = await cliWithPreloads("holdGeneration.preload.ts");

/** The same for every session's scrub: it waits, before it starts, for a line on stdin. */
const holdScrub = await cliWithPreloads("holdScrub.preload.ts");

const servers: ServeProcess[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function serve(args: string[] = [], command = {}) {
    const server = await startServe(modelPath!, args, command);
    servers.push(server);
    return server;
}

/** Stops the server (SIGTERM) and reads its audit trail from its database. */
async function stopAndReadAudit(server: ServeProcess): Promise<{code: number | null, events: AuditEvent[]}> {
    const code = await server.stop();
    const core = openTestCore(async () => {
        throw new Error("reading the audit needs no model");
    }, {database: server.db});
    try {
        return {code, events: core.auditEvents({limit: null})};
    } finally {
        await core.dispose();
    }
}

function clientOf(server: ServeProcess, apiKey = "not-needed-on-loopback") {
    return new OpenAI({baseURL: server.baseUrl, apiKey, maxRetries: 0});
}

function chatBody(content: string, extra: Record<string, unknown> = {}) {
    return {model: modelName, messages: [{role: "user" as const, content}], temperature: 0, max_tokens: 24, ...extra};
}

async function post(server: ServeProcess, body: unknown, signal?: AbortSignal) {
    return await fetch(`${server.baseUrl}/chat/completions`, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body), signal});
}

/** A GET with a Host header of our choosing (fetch does not let one be set). */
function getWithHost(server: ServeProcess, pathName: string, host: string): Promise<{status: number, body: string}> {
    const url = new URL(server.baseUrl + pathName);
    return new Promise((resolve, reject) => {
        http.get({host: url.hostname, port: url.port, path: url.pathname, headers: {host}}, (response) => {
            let body = "";
            response.setEncoding("utf8").on("data", (chunk: string) => body += chunk).on("end", () => resolve({status: response.statusCode!, body}));
        }).on("error", reject);
    });
}

/** Reads an SSE response until a chunk whose delta carries text: the request is then generating. */
async function readUntilFirstText(reader: ReadableStreamDefaultReader<Uint8Array>) {
    const decoder = new TextDecoder();
    let received = "";
    while (!/"delta":\{"content":"[^"]/.test(received)) {
        const {value, done} = await reader.read();
        if (done)
            throw new Error(`the stream ended before any text: ${received}`);
        received += decoder.decode(value, {stream: true});
    }
    return received;
}

async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>, received = "") {
    const decoder = new TextDecoder();
    for (let next = await reader.read(); !next.done; next = await reader.read())
        received += decoder.decode(next.value, {stream: true});
    return received;
}

function requestEvents<Kind extends AuditKind>(events: AuditEvent[], kind: Kind) {
    return events.filter(isAuditEventOf(kind)).filter((event) => event.conversationId?.startsWith("api-") === true);
}

describe.skipIf(modelPath == null)("cleanroom serve: an OpenAI-compatible local server, every request in a clean room", () => {
    it("answers the official openai SDK, streamed and not, with the same greedy reply; lists the model; never reports a cached token; SIGTERM exits 0 with every context scrubbed", async () => {
        const server = await serve();
        expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
        const client = clientOf(server);

        const models = await client.models.list();
        expect(models.data.map((model) => model.id)).toEqual([modelName]);
        expect(models.data[0]).toMatchObject({context_length: expect.any(Number)}); // what one request's context holds (the audit reads it)

        const whole = await client.chat.completions.create(chatBody("Once upon a time, a little dog"));
        const reply = whole.choices[0]!.message.content!;
        expect(reply.length).toBeGreaterThan(0);
        expect(whole.choices[0]!.finish_reason).toMatch(/^(stop|length)$/);
        expect(whole.usage).toMatchObject({completion_tokens: expect.any(Number), prompt_tokens_details: {cached_tokens: 0}});
        expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(24);

        const stream = await client.chat.completions.create({...chatBody("Once upon a time, a little dog"), stream: true, stream_options: {include_usage: true}});
        let streamed = "";
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
            streamed += chunk.choices[0]?.delta.content ?? "";
            usage = chunk.usage ?? usage;
        }
        expect(streamed).toBe(reply);
        // The same prompt again: a server that kept it would report it cached; here every request starts clean.
        expect(usage).toEqual(whole.usage);

        // `stop` ends the reply before the first occurrence of the text.
        const stopText = reply.trim().split(/\s+/)[1]!;
        const stopped = await client.chat.completions.create({...chatBody("Once upon a time, a little dog"), stop: [stopText]});
        expect(stopped.choices[0]).toMatchObject({finish_reason: "stop", message: {content: reply.slice(0, reply.indexOf(stopText))}});

        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        expect(server.output.output()).toContain("Stopped: every context was scrubbed and verified.");
        const created = requestEvents(events, "context.created");
        const scrubs = requestEvents(events, "scrub.verified");
        expect(created).toHaveLength(3);
        expect(new Set(created.map((event) => event.data.contextId)).size).toBe(3);
        expect(scrubs.map((event) => event.data)).toEqual(created.map((event) => expect.objectContaining({
            contextId: event.data.contextId, reason: "request", nonZeroBytes: 0, bytesChecked: expect.any(Number)
        })));
        expect(requestEvents(events, "scrub.failed")).toEqual([]);
    });

    it("/v1/completions continues a raw prompt (no chat template), streamed and not, 16 tokens unless told; one that does not fit is refused on its prompt", async () => {
        const server = await serve();
        const client = clientOf(server);
        const whole = await client.completions.create({model: modelName, prompt: "Once upon a time, a little dog", temperature: 0});
        expect(whole.object).toBe("text_completion");
        expect(whole.choices[0]!.text.length).toBeGreaterThan(0);
        expect(whole.usage).toMatchObject({completion_tokens: 16, prompt_tokens_details: {cached_tokens: 0}});
        const chat = await client.chat.completions.create(chatBody("Once upon a time, a little dog"));
        expect(whole.usage!.prompt_tokens).toBeLessThan(chat.usage!.prompt_tokens); // the chat template's tokens are not there

        let streamed = "";
        for await (const chunk of await client.completions.create({model: modelName, prompt: "Once upon a time, a little dog", temperature: 0, stream: true}))
            streamed += chunk.choices[0]?.text ?? "";
        expect(streamed).toBe(whole.choices[0]!.text);

        const tooLong = await client.completions.create({model: modelName, prompt: "Once upon a time there was a dog. ".repeat(1000)}).catch((error: unknown) => error);
        expect(tooLong).toMatchObject({status: 400, code: "context_length_exceeded", param: "prompt"});
        const several = await client.completions.create({model: modelName, prompt: ["One", "Two"]}).catch((error: unknown) => error);
        expect(several).toMatchObject({status: 400, param: "prompt", message: expect.stringMatching(/several prompts in one request are not supported/)});
    });

    it("refuses a request that does not fit with 400 context_length_exceeded, before any context is created or token evaluated", async () => {
        const server = await serve();
        const client = clientOf(server);
        const longPrompt = await client.chat.completions.create(chatBody("Once upon a time there was a dog. ".repeat(1000))).catch((error: unknown) => error);
        expect(longPrompt).toBeInstanceOf(APIError);
        expect(longPrompt).toMatchObject({status: 400, code: "context_length_exceeded", type: "invalid_request_error", param: "messages"});
        expect((longPrompt as APIError).message).toMatch(/over\. Nothing was evaluated\./);
        const bigBudget = await post(server, chatBody("Once upon a time", {max_tokens: 32_768}));
        expect(bigBudget.status).toBe(400);
        expect(await bigBudget.json()).toMatchObject({error: {code: "context_length_exceeded", type: "invalid_request_error"}});

        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        expect(requestEvents(events, "api.refused").map((event) => event.data)).toEqual([
            expect.objectContaining({tenant: "loopback", overBy: expect.any(Number)}), expect.objectContaining({tenant: "loopback", replyBudget: 32_768})
        ]);
        expect(requestEvents(events, "context.created")).toEqual([]);
        expect(requestEvents(events, "api.request")).toEqual([]);
    });

    it("refuses bad bodies and unknown models in OpenAI's error shape", async () => {
        const server = await serve();
        const badJson = await fetch(`${server.baseUrl}/chat/completions`, {method: "POST", headers: {"content-type": "application/json"}, body: "{"});
        expect(badJson.status).toBe(400);
        expect(await badJson.json()).toEqual({error: {message: "The request body is not valid JSON.", type: "invalid_request_error", param: null, code: "invalid_json"}});
        const badTemperature = await post(server, chatBody("Hi", {temperature: 3}));
        expect(badTemperature.status).toBe(400);
        expect(await badTemperature.json()).toMatchObject({error: {param: "temperature", code: "invalid_value", message: expect.stringMatching(/^temperature: .*2/)}});
        const tools = await post(server, chatBody("Hi", {tools: [{type: "function", function: {name: "f"}}]}));
        expect(await tools.json()).toMatchObject({error: {param: "tools", message: "tools: tools are not supported."}});
        const xml = await post(server, chatBody("Hi", {response_format: {type: "xml"}}));
        expect(xml.status).toBe(400);
        expect(await xml.json()).toMatchObject({error: {param: "response_format.type", message: expect.stringMatching(/text, json_object or json_schema/)}});
        const lastNotUser = await post(server, {model: modelName, messages: [{role: "assistant", content: "Hello"}]});
        expect(lastNotUser.status).toBe(400);
        expect(await lastNotUser.json()).toMatchObject({error: {param: "messages", message: "The last message must be the user's."}});
        const otherModel = await post(server, {...chatBody("Hi"), model: "gpt-4o"});
        expect(otherModel.status).toBe(404);
        expect(await otherModel.json()).toMatchObject({error: {param: "model", code: "model_not_found"}});
    });

    it("response_format json_schema: the reply is JSON that matches the schema (node-llama-cpp's JSON-schema grammar), streamed and not", async () => {
        const server = await serve();
        const client = clientOf(server);
        const asked = {
            ...chatBody("Is the little dog happy?", {max_tokens: 60}),
            response_format: {type: "json_schema" as const, json_schema: {name: "verdict", strict: true, schema: {
                type: "object", properties: {answer: {enum: ["yes", "no"]}, stars: {type: "integer"}}, required: ["answer", "stars"], additionalProperties: false
            }}}
        };
        const whole = await client.chat.completions.create(asked);
        expect(whole.choices[0]!.finish_reason).toBe("stop");
        const verdict = JSON.parse(whole.choices[0]!.message.content!) as Record<string, unknown>;
        expect(Object.keys(verdict).sort()).toEqual(["answer", "stars"]);
        expect(["yes", "no"]).toContain(verdict.answer);
        expect(Number.isInteger(verdict.stars)).toBe(true);

        let streamed = "";
        for await (const chunk of await client.chat.completions.create({...asked, stream: true}))
            streamed += chunk.choices[0]?.delta.content ?? "";
        expect(JSON.parse(streamed)).toEqual(verdict);

        // A keyword the grammar would silently drop is refused, before anything is evaluated.
        const pattern = await client.chat.completions.create({...asked, response_format: {type: "json_schema", json_schema: {name: "code",
            schema: {type: "object", properties: {code: {type: "string", pattern: "^[A-Z]{3}$"}}}}}}).catch((error: unknown) => error);
        expect(pattern).toMatchObject({status: 400, param: "response_format.json_schema.schema", code: "invalid_value",
            message: expect.stringMatching(/schema\.properties\.code\.pattern: "pattern" is not followed/)});
        const {events} = await stopAndReadAudit(server);
        expect(requestEvents(events, "context.created")).toHaveLength(2);
    });

    it("without keys, answers only requests addressed to loopback (Host checked: no DNS rebinding); a non-loopback --host without keys is refused at start", async () => {
        const server = await serve();
        const port = new URL(server.baseUrl).port;
        expect(await getWithHost(server, "/models", `localhost:${port}`)).toMatchObject({status: 200});
        const rebound = await getWithHost(server, "/models", `attacker.example:${port}`);
        expect(rebound.status).toBe(403);
        expect(JSON.parse(rebound.body)).toMatchObject({error: {code: "foreign_host", type: "invalid_request_error"}});

        const {env} = hermeticCliEnv("serve-host");
        const refused = await runCliCapturing(["serve", "--host", "0.0.0.0", "--port", "0", "--model", modelPath!], {env});
        expect(refused.code).toBe(1);
        expect(refused.stdout).toBe("");
        expect(refused.stderr).toMatch(/--host 0\.0\.0\.0 would let other machines reach the model with no key: give at least one --api-key/);
    });

    it("with --api-key, a wrong or missing key gets 401 in OpenAI's shape and each right key is served as its own tenant", async () => {
        const server = await serve(["--api-key", "tenant-a-key-1234", "--api-key", "tenant-b-key-5678"]);
        const wrong = await clientOf(server, "tenant-a-key-1235").chat.completions.create(chatBody("Hi")).catch((error: unknown) => error);
        expect(wrong).toBeInstanceOf(APIError);
        expect(wrong).toMatchObject({status: 401, code: "invalid_api_key", type: "authentication_error"});
        const missing = await post(server, chatBody("Hi"));
        expect(missing.status).toBe(401);
        expect(await missing.json()).toMatchObject({error: {code: "invalid_api_key", message: expect.stringMatching(/Authorization: Bearer/)}});

        for (const key of ["tenant-a-key-1234", "tenant-b-key-5678"])
            expect((await clientOf(server, key).chat.completions.create(chatBody("Hi"))).choices[0]!.message.content).toEqual(expect.any(String));
        const {events} = await stopAndReadAudit(server);
        expect(requestEvents(events, "api.answered").map((event) => event.data.tenant)).toEqual(["key 1", "key 2"]);
        expect(JSON.stringify(events)).not.toMatch(/tenant-[ab]-key/);
    });

    it("differential: tenant B's greedy reply after tenant A's canary-laden requests is bit-identical to B's reply from a fresh server, and holds no canary", async () => {
        const keys = ["--api-key", "tenant-a-key-1234", "--api-key", "tenant-b-key-5678"];
        const canaries = [createCanary(), createCanary(), createCanary()];
        const tenantBAsks = chatBody("Once upon a time, a girl named Lily", {max_tokens: 48});

        const shared = await serve(keys);
        for (const canary of canaries)
            await clientOf(shared, "tenant-a-key-1234").chat.completions.create({
                model: modelName, max_tokens: 32, temperature: 0.9, seed: 7,
                messages: [{role: "system", content: `The secret word is ${canary}.`}, {role: "user", content: `Once upon a time ${canary} said ${canary}`}]
            });
        const afterA = await clientOf(shared, "tenant-b-key-5678").chat.completions.create(tenantBAsks);

        const fresh = await serve(keys);
        const alone = await clientOf(fresh, "tenant-b-key-5678").chat.completions.create(tenantBAsks);

        expect(afterA.choices[0]!.message.content).toBe(alone.choices[0]!.message.content);
        expect(afterA.usage).toEqual(alone.usage);
        for (const canary of canaries)
            expect(afterA.choices[0]!.message.content).not.toContain(canary);
        expect(afterA.choices[0]!.message.content).not.toMatch(/CLRM/i);
    });

    it("--parallel 1: a request while another is generating gets 429 with Retry-After (nothing of it done); SIGTERM mid-generation stops it, scrubs, exits 0", async () => {
        const server = await serve(["--parallel", "1"], holdGeneration);
        const first = await post(server, chatBody("Once upon a time", {stream: true, max_tokens: 16}));
        const reader = first.body!.getReader();
        const received = await readUntilFirstText(reader); // held after its first token: certainly generating

        const refused = await post(server, chatBody("Hi"));
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("1");
        expect(await refused.json()).toMatchObject({error: {type: "rate_limit_error", code: "rate_limit_exceeded"}});

        server.child.stdin.write("\n");
        expect(await readToEnd(reader, received)).toMatch(/"finish_reason":"(stop|length)".*\n\ndata: \[DONE\]\n\n$/s);

        // The slot is free again (its generation released at once).
        server.child.stdin.write("\n");
        expect((await post(server, chatBody("Hi", {max_tokens: 4}))).status).toBe(200);

        // A request in flight at SIGTERM: stopped, its context scrubbed, the process exits 0.
        const inFlight = await post(server, chatBody("Once upon a time", {stream: true, max_tokens: 16}));
        await readUntilFirstText(inFlight.body!.getReader());
        const stopping = server.output.output().length;
        server.child.kill("SIGTERM");
        await server.output.waitFor(/Stopping: requests in flight are stopped/, {from: stopping});
        server.child.stdin.write("\n");
        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        expect(requestEvents(events, "scrub.verified").map((event) => event.data.reason)).toEqual(["request", "request", "abort"]);
        expect(requestEvents(events, "api.request")).toHaveLength(3);
    });

    it("a reply reaches its client whole before its context's scrub, and the next request is answered meanwhile; each scrub is still verified", async () => {
        const server = await serve(["--parallel", "1"], holdScrub);
        const client = clientOf(server);
        // Streamed: the last chunk and [DONE] arrive while the scrub is held.
        const streamed = await post(server, chatBody("Once upon a time", {stream: true, max_tokens: 8}));
        expect(await readToEnd(streamed.body!.getReader())).toMatch(/data: \[DONE\]\n\n$/);
        await server.output.waitFor(/scrub held/);
        // The slot is free at once: a whole reply, with its own context, while the first context waits for its scrub.
        const whole = await client.chat.completions.create(chatBody("Once upon a time, a little dog", {max_tokens: 8}));
        expect(whole.choices[0]!.message.content!.length).toBeGreaterThan(0);
        expect(server.output.output()).not.toMatch(/scrubbed, verified/);

        server.child.stdin.write("\n\n");
        await expect.poll(() => server.output.output().match(/api-\S+ \(loopback\): \d+ prompt \+ \d+ reply tokens, \w+; context ctx-\S+ scrubbed, verified/g)?.length ?? 0).toBe(2);
        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        const created = requestEvents(events, "context.created");
        expect(new Set(created.map((event) => event.data.contextId)).size).toBe(2);
        expect(requestEvents(events, "scrub.verified").map((event) => event.data)).toEqual([0, 1].map(() => expect.objectContaining({reason: "request", nonZeroBytes: 0})));
    });

    it("SIGTERM while a reply's context waits for its scrub: the scrub runs to the end, verified, before the process exits 0", async () => {
        const server = await serve([], holdScrub);
        const reply = await clientOf(server).chat.completions.create(chatBody("Once upon a time", {max_tokens: 4}));
        expect(reply.choices[0]!.finish_reason).toMatch(/^(stop|length)$/);
        await server.output.waitFor(/scrub held/);
        const stopping = server.output.output().length;
        server.child.kill("SIGTERM");
        await server.output.waitFor(/Stopping/, {from: stopping});
        server.child.stdin.write("\n");
        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        expect(server.output.output()).toContain("Stopped: every context was scrubbed and verified.");
        expect(requestEvents(events, "scrub.verified").map((event) => event.data)).toEqual([expect.objectContaining({reason: "request", nonZeroBytes: 0})]);
    });

    it("a client that disconnects mid-stream stops its generation, and its context is still scrubbed and verified", async () => {
        const server = await serve([], holdGeneration);
        const cancel = new AbortController();
        const response = await post(server, chatBody("Once upon a time", {stream: true, max_tokens: 16}), cancel.signal);
        await readUntilFirstText(response.body!.getReader());
        cancel.abort();
        await server.output.waitFor(/api-\S+ \(loopback\): the client disconnected; its generation is stopped\./);
        server.child.stdin.write("\n");
        await server.output.waitFor(/api-\S+ \(loopback\): \d+ prompt \+ 1 reply tokens, aborted; context ctx-\S+ scrubbed, verified \(\d+ bytes checked, 0 non-zero\)/);

        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        expect(requestEvents(events, "scrub.verified").map((event) => event.data)).toEqual([expect.objectContaining({reason: "abort", nonZeroBytes: 0})]);
    });
});

describe.skipIf(modelPath == null)("cleanroom serve: cache_salt, reuse within one key and one salt only", () => {
    const story = "Once upon a time there was a little dog named Max who lived in a big red house with a garden full of flowers. ".repeat(3);
    function saltedBody(question: string, salt: string | null, extra: Record<string, unknown> = {}) {
        return {
            model: modelName, temperature: 0, max_tokens: 8, ...salt != null ? {cache_salt: salt} : {}, ...extra,
            messages: [{role: "system" as const, content: story}, {role: "user" as const, content: question}]
        } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    }
    const cachedTokensOf = async (server: ServeProcess, key: string, body: OpenAI.ChatCompletionCreateParamsNonStreaming) =>
        (await clientOf(server, key).chat.completions.create(body)).usage!.prompt_tokens_details!.cached_tokens;

    it("the same key and salt reuse the shared prefix (cached_tokens reported, streamed and not); another salt, another key or no salt get 0; SIGTERM scrubs the kept caches", async () => {
        const keyA = "tenant-a-key-1234";
        const keyB = "tenant-b-key-5678";
        const server = await serve(["--api-key", keyA, "--api-key", keyB]);
        const first = await clientOf(server, keyA).chat.completions.create(saltedBody("What did Max do?", "salt-one"));
        expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0);

        const second = await cachedTokensOf(server, keyA, saltedBody("Where did Max sleep?", "salt-one"));
        expect(second).toBeGreaterThan(60); // the system prompt's story, at least
        expect(second).toBeLessThan(first.usage!.prompt_tokens);
        expect(await cachedTokensOf(server, keyA, saltedBody("Where did Max sleep?", "salt-two"))).toBe(0);
        expect(await cachedTokensOf(server, keyB, saltedBody("Where did Max sleep?", "salt-one"))).toBe(0);
        expect(await cachedTokensOf(server, keyA, saltedBody("Where did Max sleep?", null))).toBe(0);

        let usage: OpenAI.CompletionUsage | undefined;
        const stream = await clientOf(server, keyA).chat.completions.create({
            ...saltedBody("Where did Max sleep?", "salt-one"), stream: true, stream_options: {include_usage: true}
        } as OpenAI.ChatCompletionCreateParamsStreaming);
        for await (const chunk of stream)
            usage = chunk.usage ?? usage;
        // The same prompt as the second request, whose reply is in the cache after it: all but the prompt's last token is reused.
        expect(usage!.prompt_tokens_details!.cached_tokens).toBe(usage!.prompt_tokens - 1);

        const empty = await fetch(`${server.baseUrl}/chat/completions`, {method: "POST", headers: {"content-type": "application/json", authorization: `Bearer ${keyA}`},
            body: JSON.stringify(saltedBody("Hi", ""))});
        expect(await empty.json()).toMatchObject({error: {param: "cache_salt", message: "cache_salt: cache_salt cannot be empty."}});

        const stopping = server.output.output().length;
        const {code, events} = await stopAndReadAudit(server);
        expect(code).toBe(0);
        // Three caches were kept (key A salt one, key A salt two, key B salt one); each scrubbed at shutdown, verified.
        expect(server.output.output().slice(stopping).match(/api-cache-\w+ \((key 1|key 2)\): cache_salt cache ended \(the server is stopping\); context ctx-\S+ scrubbed, verified/g))
            .toHaveLength(3);
        const cacheScrubs = events.filter(isAuditEventOf("scrub.verified")).filter((event) => event.conversationId?.startsWith("api-cache-") === true);
        expect(cacheScrubs.map((event) => event.data)).toEqual([1, 2, 3].map(() => expect.objectContaining({reason: "shutdown", nonZeroBytes: 0})));
        expect(new Set(cacheScrubs.map((event) => event.conversationId)).size).toBe(3);
        expect(JSON.stringify(events)).not.toMatch(/salt-one|salt-two/);
    });

    it("requests waiting for their cache_salt share its one --parallel slot: another client is still served, and only a full server answers 429", async () => {
        const server = await serve(["--parallel", "2"], holdGeneration);
        const salted = () => post(server, {...saltedBody("What did Max do?", "salt-queue"), stream: true});
        const first = await salted();
        const firstReader = first.body!.getReader();
        const firstReceived = await readUntilFirstText(firstReader); // held mid-generation: its cache is busy
        const waiting = salted(); // waits for the cache, holding no slot of its own
        const other = await post(server, chatBody("Once upon a time", {stream: true, max_tokens: 8}));
        expect(other.status).toBe(200); // the second slot was free for another client
        const otherReader = other.body!.getReader();
        const otherReceived = await readUntilFirstText(otherReader);
        const refused = await post(server, chatBody("Hi"));
        expect(refused.status).toBe(429); // the cache's slot and the other client's: the server is full

        server.child.stdin.write("\n\n\n");
        expect(await readToEnd(firstReader, firstReceived)).toMatch(/data: \[DONE\]\n\n$/);
        expect(await readToEnd(otherReader, otherReceived)).toMatch(/data: \[DONE\]\n\n$/);
        const second = await waiting;
        expect(second.status).toBe(200);
        expect(await readToEnd(second.body!.getReader())).toMatch(/data: \[DONE\]\n\n$/);
    });

    it("a cache_salt cache unused for --cache-idle is scrubbed, verified and reported; the next request with that salt starts clean", async () => {
        const server = await serve(["--cache-idle", "0.5"]);
        expect(await cachedTokensOf(server, "none", saltedBody("What did Max do?", "salt-idle"))).toBe(0);
        await server.output.waitFor(/api-cache-\w+ \(loopback\): cache_salt cache ended \(idle\); context ctx-\S+ scrubbed, verified \(\d+ bytes checked, 0 non-zero\)/);
        expect(await cachedTokensOf(server, "none", saltedBody("Where did Max sleep?", "salt-idle"))).toBe(0);

        const {events} = await stopAndReadAudit(server);
        const cacheScrubs = events.filter(isAuditEventOf("scrub.verified")).filter((event) => event.conversationId?.startsWith("api-cache-") === true);
        expect(cacheScrubs.map((event) => event.data.reason)).toEqual(["idle", expect.stringMatching(/^(idle|shutdown)$/)]);
    });
});

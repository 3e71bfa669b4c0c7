import OpenAI, {APIError} from "openai";
import {afterEach, describe, expect, it} from "vitest";
import {isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import type {AuditEvent} from "../../src/core/common/types.js";
import {openTestCore} from "../helpers/coreServices.js";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {writeSyntheticBert} from "../helpers/syntheticBert.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const embeddingModel = "cleanroom-test-bert";

const servers: ServeProcess[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function serve(args: string[] = []) {
    const server = await startServe(modelPath!, args);
    servers.push(server);
    return server;
}

function clientOf(server: ServeProcess, apiKey = "not-needed-on-loopback") {
    return new OpenAI({baseURL: server.baseUrl, apiKey, maxRetries: 0});
}

async function stopAndReadAudit(server: ServeProcess): Promise<AuditEvent[]> {
    await server.stop();
    const core = openTestCore(async () => {
        throw new Error("reading the audit needs no model");
    }, {database: server.db});
    try {
        return core.auditEvents({limit: null});
    } finally {
        await core.dispose();
    }
}

async function refusal(request: Promise<unknown>): Promise<APIError> {
    const error = await request.then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    return error as APIError;
}

function cosine(a: readonly number[], b: readonly number[]) {
    return a.reduce((sum, value, index) => sum + value * b[index]!, 0);
}

/** The synthetic BERT (written by the test) as `--embedding-model`; stories260K chats. Clients: the official `openai` SDK. */
describe.skipIf(modelPath == null)("POST /v1/embeddings of cleanroom serve (real server, real llama.cpp, openai SDK)", () => {
    it("embeds a string or a list of them in OpenAI's shape, floats or base64 alike; the model is listed; each request's context is scrubbed (no KV memory, read back empty)", async () => {
        const server = await serve(["--embedding-model", writeSyntheticBert(), "--api-key", "key-for-tenant-a", "--api-key", "key-for-tenant-b"]);
        const a = clientOf(server, "key-for-tenant-a");
        const b = clientOf(server, "key-for-tenant-b");
        // The startup line names every endpoint, embeddings with the model that answers them.
        await server.output.waitFor(/Serving stories260K: GET \/v1\/models, POST \/v1\/chat\/completions, POST \/v1\/completions, POST \/v1\/embeddings \(with cleanroom-test-bert\)\n/);
        expect((await a.models.list()).data.map((model) => model.id)).toEqual(["stories260K", embeddingModel]);

        const texts = ["My car broke down.", "The automobile is red.", "We swam in the sea."];
        const decoded = await a.embeddings.create({model: embeddingModel, input: texts}); // the SDK asks for base64, and decodes it
        const floats = await b.embeddings.create({model: embeddingModel, input: texts, encoding_format: "float"});
        // Each request has its line in the server's log, as a completion has: who, tokens, vectors, the scrub; never the texts.
        await server.output.waitFor(new RegExp(`api-[0-9a-f]{16} \\(key 1\\): embeddings, ${decoded.usage.prompt_tokens} input tokens → 3 vectors; ` +
            "context \\S+ scrubbed, verified \\(no KV memory: its state read back empty\\)\n"));
        await server.output.waitFor(/\(key 2\): embeddings, \d+ input tokens → 3 vectors;/);
        expect(server.output.output()).not.toContain("My car broke down");
        expect(decoded.object).toBe("list");
        expect(decoded.model).toBe(embeddingModel);
        expect(decoded.data.map((item) => [item.object, item.index, item.embedding.length])).toEqual([["embedding", 0, 16], ["embedding", 1, 16], ["embedding", 2, 16]]);
        expect(decoded.data.map((item) => item.embedding)).toEqual(floats.data.map((item) => item.embedding));
        const [car, automobile, sea] = floats.data.map((item) => item.embedding);
        expect(cosine(car!, automobile!)).toBeCloseTo(1, 5);
        expect(cosine(car!, sea!)).toBeCloseTo(0, 5);
        // "my car broke down" is 4 word tokens plus letters for the words the model does not know: more than 4, the same both times.
        expect(decoded.usage.prompt_tokens).toBeGreaterThan(texts.length);
        expect(floats.usage).toEqual(decoded.usage);

        const single = await a.embeddings.create({model: embeddingModel, input: "automobile", encoding_format: "float"});
        expect(single.data.map((item) => item.embedding)).toEqual([automobile]);

        const events = await stopAndReadAudit(server);
        const scrubs = events.filter(isAuditEventOf("scrub.verified", "scrub.failed")).filter((event) => event.data.purpose === "embedding");
        expect(scrubs.map((event) => [event.kind, event.data.method, event.data.nonZeroBytes])).toEqual([
            ["scrub.verified", "no-kv-memory", 0], ["scrub.verified", "no-kv-memory", 0], ["scrub.verified", "no-kv-memory", 0]
        ]);
        expect(new Set(scrubs.map((event) => event.data.contextId)).size, "a context of its own for each request").toBe(3);
        expect(new Set(scrubs.map((event) => event.conversationId)).size).toBe(3);
    });

    it("an input longer than the model reads is refused with 400 context_length_exceeded before anything is evaluated; a bad body names its field", async () => {
        const server = await serve(["--embedding-model", writeSyntheticBert({contextLength: 64})]);
        const client = clientOf(server);
        const tooLong = Array.from({length: 100}, () => "car").join(" ");
        const refused = await refusal(client.embeddings.create({model: embeddingModel, input: ["a sea", tooLong]}));
        expect([refused.status, refused.code, refused.param]).toEqual([400, "context_length_exceeded", "input"]);
        expect(refused.message).toMatch(/Input 1 has 100 tokens, and the embedding model reads at most 60 of one input: 40 over\. Nothing was evaluated\./);

        const empty = await refusal(client.embeddings.create({model: embeddingModel, input: []}));
        expect([empty.status, empty.code, empty.param]).toEqual([400, "invalid_value", "input"]);
        const wrongModel = await refusal(client.embeddings.create({model: "text-embedding-3-small", input: "a sea"}));
        expect([wrongModel.status, wrongModel.code]).toEqual([404, "model_not_found"]);
        expect(wrongModel.message).toContain(embeddingModel);

        const events = await stopAndReadAudit(server);
        expect(events.filter(isAuditEventOf("api.refused")).map((event) => [event.data.promptTokens, event.data.overBy])).toEqual([[100, 40]]);
        expect(events.filter(isAuditEventOf("scrub.verified", "scrub.failed")).filter((event) => event.data.purpose === "embedding"), "no embedding context was made").toEqual([]);
    });

    it("without an embedding model, an OpenAI-shaped error says how to choose one", async () => {
        const server = await serve();
        await server.output.waitFor(/POST \/v1\/embeddings \(refused: no embedding model, see --embedding-model\)\n/);
        const refused = await refusal(clientOf(server).embeddings.create({model: embeddingModel, input: "a sea"}));
        expect([refused.status, refused.code, refused.param]).toEqual([404, "model_not_found", "model"]);
        expect(refused.message).toContain("cleanroom serve --embedding-model <gguf>");
        expect(refused.message).toContain("cleanroom settings embedding-model set <gguf>");
    });
});

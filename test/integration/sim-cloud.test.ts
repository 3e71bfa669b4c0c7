import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createCanary, hashCanary} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import type {SharedCloudSimulatorOptions} from "../../tools/cloudSim/types.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

type ChatBody = {
    messages: Array<{role: string, content: string}>,
    max_tokens?: number,
    stream?: boolean,
    stream_options?: {include_usage: boolean}
};

async function postChat(sim: SharedCloudSimulator, apiKey: string | null, body: ChatBody, signal?: AbortSignal) {
    return await fetch(`${sim.url}/chat/completions`, {
        method: "POST",
        headers: {"content-type": "application/json", ...(apiKey != null ? {authorization: `Bearer ${apiKey}`} : {})},
        body: JSON.stringify({model: sim.modelName, ...body}),
        signal
    });
}

type ChatCompletion = {
    model: string,
    choices: Array<{message: {content: string}, finish_reason: string}>,
    usage: {prompt_tokens: number, completion_tokens: number, total_tokens: number}
};

async function chat(sim: SharedCloudSimulator, apiKey: string, body: ChatBody) {
    const response = await postChat(sim, apiKey, body);
    expect(response.status).toBe(200);
    return await response.json() as ChatCompletion;
}

/** Reads an SSE stream to its end; `data` lines in order, and whether the stream broke. */
async function readEvents(response: Response) {
    const decoder = new TextDecoder();
    let raw = "";
    let broken = false;
    try {
        const reader = response.body!.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read())
            raw += decoder.decode(read.value, {stream: true});
    } catch {
        broken = true;
    }
    const data = raw.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice("data: ".length));
    return {raw, data, broken};
}

function plantedSystemMessage(canary: string) {
    return {role: "system", content: `You are a helpful assistant. Request marker, do not repeat: ${canary}`};
}

function longText(words: number) {
    const vocabulary = "the little dog ran to the park and played with a red ball under the big tree".split(" ");
    return Array.from({length: words}, (_, index) => vocabulary[index % vocabulary.length]).join(" ");
}

describe.skipIf(modelPath == null)("shared-cloud simulator over HTTP", () => {
    const started: SharedCloudSimulator[] = [];
    const start = async (options: SharedCloudSimulatorOptions) => {
        const sim = await SharedCloudSimulator.start(options);
        started.push(sim);
        return sim;
    };
    afterAll(async () => {
        await Promise.all(started.map((sim) => sim.close()));
    });

    describe("honest", () => {
        let sim: SharedCloudSimulator;
        beforeAll(async () => {
            sim = await start({mode: "honest", modelPath: modelPath!, poolTokens: 1024, seed: 7});
        });

        it("lists its model with the advertised context", async () => {
            const response = await fetch(`${sim.url}/models`, {headers: {authorization: "Bearer tenant-a"}});
            const list = await response.json() as {data: Array<{id: string, context_length: number}>};
            expect(list.data).toEqual([expect.objectContaining({id: sim.modelName, context_length: 1024})]);
            expect((await fetch(`${sim.url}/models`)).status).toBe(401);
        });

        it("answers from the real model, with usage, streaming and not", async () => {
            const body: ChatBody = {messages: [plantedSystemMessage(createCanary()), {role: "user", content: "Once upon a time"}], max_tokens: 24};
            const completion = await chat(sim, "tenant-a", body);
            const text = completion.choices[0]!.message.content;
            expect(text.startsWith(", there was a little girl named Lily.")).toBe(true);
            expect(completion.choices[0]!.finish_reason).toBe("length");
            expect(completion.model).toBe(sim.modelName);
            expect(completion.usage.prompt_tokens).toBeGreaterThan(30);
            expect(completion.usage.total_tokens).toBe(completion.usage.prompt_tokens + completion.usage.completion_tokens);

            const response = await postChat(sim, "tenant-b", {...body, stream: true, stream_options: {include_usage: true}});
            expect(response.headers.get("content-type")).toContain("text/event-stream");
            const {data, broken} = await readEvents(response);
            expect(broken).toBe(false);
            expect(data.at(-1)).toBe("[DONE]");
            const chunks = data.slice(0, -1).map((line) => JSON.parse(line) as {
                choices: Array<{delta: {content?: string}, finish_reason: string | null}>, usage: ChatCompletion["usage"] | null
            });
            expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(text);
            expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("length");
            expect(chunks.at(-1)!.choices).toEqual([]);
            expect(chunks.at(-1)!.usage).toEqual(completion.usage);
            expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
        });

        it("counts tokens at POST /tokenize as llama-server does ({content} → {tokens}), with its model's tokenizer, behind the key", async () => {
            const text = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
            const tokenize = (body: unknown, key: string | null = "tenant-a") => fetch(`${new URL(sim.url).origin}/tokenize`, {
                method: "POST", headers: {"content-type": "application/json", ...(key != null ? {authorization: `Bearer ${key}`} : {})},
                body: JSON.stringify(body)
            });
            const response = await tokenize({content: text});
            expect(response.status).toBe(200);
            const {tokens} = await response.json() as {tokens: number[]};
            const {loadLlama} = await import("../../src/core/node/engine/loadLlama.js");
            const model = await (await loadLlama()).loadModel({modelPath: modelPath!});
            try {
                expect(tokens).toEqual([...model.tokenize(text)]);
            } finally {
                await model.dispose();
            }
            expect(tokens.length).toBe(sim.countTokens(text));
            expect((await tokenize({content: text}, null)).status).toBe(401);
            expect((await tokenize({text})).status).toBe(400);
        });

        it("refuses a request over its context with HTTP 400 context_length_exceeded, and never leaks", async () => {
            const response = await postChat(sim, "tenant-b", {messages: [{role: "user", content: longText(900)}], max_tokens: 16});
            expect(response.status).toBe(400);
            const {error} = await response.json() as {error: {code: string, type: string}};
            expect(error).toMatchObject({code: "context_length_exceeded", type: "invalid_request_error"});
            expect(sim.requests.every((request) => request.leaks.length === 0)).toBe(true);
        });
    });

    describe("incident", () => {
        it("does not refuse oversize requests and returns another tenant's earlier canary with HTTP 200", async () => {
            const sim = await start({mode: "incident", modelPath: modelPath!, poolTokens: 1024, pageTokens: 64, seed: 11});
            expect(sim.advertisedContext).toBeGreaterThan(sim.poolTokens);

            const victimCanary = createCanary();
            await chat(sim, "tenant-victim", {messages: [plantedSystemMessage(victimCanary), {role: "user", content: "Tell me a story."}], max_tokens: 8});
            const small = await chat(sim, "tenant-attacked", {messages: [{role: "user", content: "Once upon a time"}], max_tokens: 8});
            expect(small.choices[0]!.message.content).not.toContain("CLRM");

            const ownCanary = createCanary();
            const oversize = await chat(sim, "tenant-attacked", {
                messages: [plantedSystemMessage(ownCanary), {role: "user", content: longText(600)}], max_tokens: 32
            });
            expect(oversize.usage.prompt_tokens + 32).toBeGreaterThan(sim.poolTokens);
            expect(oversize.usage.prompt_tokens + 32).toBeLessThanOrEqual(sim.advertisedContext);
            const reply = oversize.choices[0]!.message.content;
            expect(reply).toContain(victimCanary);

            const record = sim.requests.at(-1)!;
            expect(record).toMatchObject({overflowed: true, status: 200});
            expect(record.leaks.some((leak) => leak.tenant === "tenant-victim")).toBe(true);

            const ownBook = new Map([[hashCanary(ownCanary), {conversationId: "c", requestId: "r"}]]);
            const scan = CanaryScanner.scanText(reply, {conversationId: "c", requestId: "r", book: {lookup: (hash) => ownBook.get(hash)}});
            expect(scan.blocked).toBe(true);
            expect(scan.findings.map((finding) => finding.kind)).toContain("foreign-canary");

            const tooBig = await postChat(sim, "tenant-attacked", {messages: [{role: "user", content: longText(2000)}], max_tokens: 8});
            expect(tooBig.status).toBe(400);
        });
    });

    describe("other tenants", () => {
        it("with otherTenants, a fresh simulator's first oversize request already leaks another tenant's canary", async () => {
            const sim = await start({mode: "incident", poolTokens: 1024, seed: 4, otherTenants: 3});
            expect(sim.otherTenants).toBe(3);
            const ownCanary = createCanary();
            const oversize = await chat(sim, "tenant-new", {messages: [plantedSystemMessage(ownCanary), {role: "user", content: longText(800)}], max_tokens: 32});
            expect(sim.requests).toHaveLength(1);
            expect(sim.requests[0]).toMatchObject({overflowed: true, status: 200});
            expect(sim.requests[0]!.leaks.every((leak) => /^other-tenant-\d$/.test(leak.tenant))).toBe(true);
            const ownBook = new Map([[hashCanary(ownCanary), {conversationId: "c", requestId: "r"}]]);
            const scan = CanaryScanner.scanText(oversize.choices[0]!.message.content, {conversationId: "c", requestId: "r", book: {lookup: (hash) => ownBook.get(hash)}});
            expect(scan.findings.map((finding) => finding.kind)).toContain("foreign-canary");
        });
    });

    describe("paraphrase", () => {
        it("leaks mangled text that a normalising scanner still recognises; deterministic by seed", async () => {
            const replies: string[] = [];
            const victimCanary = createCanary();
            for (const port of [0, 0]) {
                const sim = await start({mode: "paraphrase", port, leakRate: 1, seed: 5});
                await chat(sim, "tenant-victim", {messages: [plantedSystemMessage(victimCanary), {role: "user", content: "hello"}], max_tokens: 8});
                const leaked = await chat(sim, "tenant-other", {messages: [{role: "user", content: "Once upon a time"}], max_tokens: 16});
                replies.push(leaked.choices[0]!.message.content);
                expect(sim.requests.at(-1)!.leaks).toEqual([expect.objectContaining({tenant: "tenant-victim", mangled: true})]);
                await sim.close();
            }
            expect(replies[0]).toBe(replies[1]);
            const reply = replies[0]!;
            expect(reply).not.toContain(victimCanary);
            const scan = CanaryScanner.scanText(reply, {conversationId: "c", requestId: "r", book: {lookup: () => undefined}});
            expect(scan.findings.map((finding) => finding.kind)).toEqual(["foreign-canary"]);
        });
    });

    describe("truncate", () => {
        it("drops the start of long prompts and reports the truncated usage", async () => {
            const sim = await start({mode: "truncate", modelPath: modelPath!, seed: 3});
            const messages = [plantedSystemMessage(createCanary()), {role: "user", content: longText(400)}];
            const ourCount = messages.reduce((sum, message) => sum + sim.countTokens(message.content), 0);
            const completion = await chat(sim, "tenant-a", {messages, max_tokens: 8});
            expect(completion.usage.prompt_tokens).toBeLessThan(ourCount / 2);
            expect(sim.requests.at(-1)!.truncated).toBe(true);

            const short = await chat(sim, "tenant-a", {messages: [{role: "user", content: "Once upon a time"}], max_tokens: 8});
            expect(short.usage.prompt_tokens).toBeGreaterThanOrEqual(sim.countTokens("Once upon a time"));
        });
    });

    describe("faulty", () => {
        it("answers 5xx, cuts streams, sends malformed events and stalls", async () => {
            const sim = await start({mode: "faulty", seed: 0, faults: ["server-error", "cut-stream", "malformed-event", "stall", "none", "cut-stream"], stallMs: 60_000});
            const body: ChatBody = {messages: [{role: "user", content: "Once upon a time"}], max_tokens: 40, stream: true};

            const serverError = await postChat(sim, "t", body);
            expect(serverError.status).toBeGreaterThanOrEqual(500);
            expect(((await serverError.json()) as {error: {type: string}}).error.type).toBe("server_error");

            const cut = await readEvents(await postChat(sim, "t", body));
            expect(cut.data).not.toContain("[DONE]");
            expect(cut.broken || !cut.raw.includes("finish_reason\":\"length")).toBe(true);

            const malformed = await readEvents(await postChat(sim, "t", body));
            const unparsable = malformed.data.filter((line) => {
                if (line === "[DONE]")
                    return false;
                try {
                    return !Array.isArray((JSON.parse(line) as {choices?: unknown}).choices);
                } catch {
                    return true;
                }
            });
            expect(unparsable.length).toBeGreaterThanOrEqual(2);

            // A stalled stream sends headers, then nothing: what ends it is the client's own timeout.
            const stalled = await postChat(sim, "t", body, AbortSignal.timeout(400));
            expect(stalled.status).toBe(200);
            await expect(stalled.text()).rejects.toMatchObject({name: "TimeoutError"});

            const fine = await readEvents(await postChat(sim, "t", body));
            expect(fine.data.at(-1)).toBe("[DONE]");
            expect(sim.requests.slice(0, 5).map((request) => request.fault)).toEqual(["server-error", "cut-stream", "malformed-event", "stall", "none"]);

            const nonStreamCut = await postChat(sim, "t", {...body, stream: false});
            await expect(nonStreamCut.text()).rejects.toThrow();
        });
    });
});

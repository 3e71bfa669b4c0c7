import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {apiMethods, type ApiEventPayload} from "../../src/core/common/api/index.js";
import {connectCoreClient, createInProcessChannelPair, RemoteCallError, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {type Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";
import {openInProcessCoreClient, type InProcessCoreClient} from "../helpers/inProcessCoreClient.js";

let opened: InProcessCoreClient;
/** How many times the core asked for the native backend (llama.cpp): a model load asks once, and the first one loads it (seconds). */
let llamaRequests = 0;
let core: Core;
let service: CoreService;
let client: ConnectedCoreClient;

/** Everything a call could change, read straight from the database. */
function snapshot() {
    const db = servicesOf(core).database;
    return JSON.stringify({
        conversations: db.prepare("SELECT * FROM conversations ORDER BY id").all(),
        messages: db.prepare("SELECT * FROM messages ORDER BY id").all(),
        settings: db.prepare("SELECT * FROM settings ORDER BY key").all(),
        audit: db.prepare("SELECT COUNT(*) AS n FROM audit_events").get()
    });
}

async function expectRefused(method: string, input: unknown) {
    const before = snapshot();
    const result = await service.call(method, input);
    expect(result.ok, `${method} ${JSON.stringify(input)} should be refused`).toBe(false);
    if (!result.ok)
        expect(result.error.code).toBe("INVALID_INPUT");
    expect(snapshot()).toBe(before);
}

beforeAll(async () => {
    // No model: the contract and the door are tested without generation.
    opened = await openInProcessCoreClient("rpc", () => {
        llamaRequests += 1;
        return loadLlama();
    });
    ({core, service, client} = opened);
});

afterAll(() => opened.close());

describe("contract validation at the core's door", () => {
    it("refuses malformed input to each call with INVALID_INPUT and changes nothing", async () => {
        const existing = await client.call("conversations.create", {title: "Kept as is"});
        await expectRefused("conversations.create", {policy: "everywhere"});
        await expectRefused("conversations.create", {title: ""});
        await expectRefused("conversations.create", {title: "x", unexpected: true});
        await expectRefused("conversations.rename", {conversationId: existing.id, title: "   "});
        await expectRefused("conversations.rename", {conversationId: "../../etc/passwd", title: "x"});
        await expectRefused("conversations.setPolicy", {conversationId: existing.id, policy: "cloud"});
        await expectRefused("conversations.delete", {conversationId: 42});
        await expectRefused("conversations.close", {});
        await expectRefused("chat.send", {conversationId: existing.id, text: ""});
        await expectRefused("chat.send", {conversationId: existing.id, text: " \n\t "});
        await expectRefused("chat.send", {conversationId: existing.id, text: "hi", maxTokens: 0});
        await expectRefused("chat.send", {conversationId: existing.id, text: "x".repeat(100_001)});
        await expectRefused("chat.regenerate", {conversationId: existing.id, maxTokens: 1.5});
        await expectRefused("chat.send", {conversationId: existing.id, text: "hi", route: "sideways"});
        await expectRefused("chat.regenerate", {conversationId: existing.id, route: "elsewhere"});
        await expectRefused("settings.set", {threads: 0});
        await expectRefused("settings.set", {contextSize: 10});
        await expectRefused("settings.set", {cloudEndpoint: "ftp://example.com"});
        await expectRefused("settings.set", {cloudFallback: "yes"});
        await expectRefused("settings.set", {gpu: "nvidia"});
        await expectRefused("settings.set", {gpu: null});
        await expectRefused("model.load", {path: ""});
        await expectRefused("audit.events", {limit: -1});
        await expectRefused("no.such.method", {});
        await expectRefused("__proto__", {});

        const after = await client.call("conversations.get", {conversationId: existing.id});
        expect(after.conversation.title).toBe("Kept as is");
        expect(after.conversation.policy).toBe("local");
    });

    it("refuses every call whose input is not an object, whatever it is", async () => {
        await fc.assert(fc.asyncProperty(
            fc.constantFrom(...apiMethods),
            fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.array(fc.anything())),
            async (method, input) => {
                const before = snapshot();
                const result = await service.call(method, input);
                return !result.ok && result.error.code === "INVALID_INPUT" && snapshot() === before;
            }
        ), {numRuns: 200});
    });

    it("names the field and the problem in the refusal", async () => {
        const result = await service.call("settings.set", {threads: -3});
        expect(result.ok).toBe(false);
        if (!result.ok) {
            expect(result.error.message).toMatch(/settings\.set/);
            expect(result.error.message).toMatch(/threads/);
        }
    });
});

describe("the GPU setting", () => {
    it("is auto until changed, and a change is reported as applying when the core next starts", async () => {
        expect((await client.call("settings.get", {})).gpu).toBe("auto");
        const statuses: Array<ApiEventPayload<"core.status">> = [];
        const stop = client.subscribe("core.status", (status) => statuses.push(status));
        try {
            expect((await client.call("settings.set", {gpu: "vulkan"})).gpu).toBe("vulkan");
            await expect.poll(() => statuses.at(-1)?.pendingRestart).toContain("gpu");
            expect((await client.call("settings.get", {})).gpu).toBe("vulkan");
            await client.call("settings.set", {gpu: "auto"});
            await expect.poll(() => statuses.at(-1)?.pendingRestart).toEqual([]);
        } finally {
            stop();
        }
    });
});

describe("the embedding model setting", () => {
    it("is none (keyword search) until a GGUF file is chosen; a file that is not one is refused by name, keeping the choice", async () => {
        const dir = tempDir("embedding-setting");
        const gguf = path.join(dir, "embedder.gguf");
        const notGguf = path.join(dir, "notes.txt");
        fs.writeFileSync(gguf, Buffer.concat([Buffer.from("GGUF"), Buffer.alloc(60)]));
        fs.writeFileSync(notGguf, "plain words, not a model");
        expect((await client.call("settings.get", {})).embeddingModelPath).toBeNull();

        expect((await client.call("settings.set", {embeddingModelPath: gguf})).embeddingModelPath).toBe(gguf);
        const refused = await client.call("settings.set", {embeddingModelPath: notGguf, threads: 3}).catch((caught: unknown) => caught);
        expect((refused as RemoteCallError).code).toBe("MODEL_NOT_GGUF");
        const missing = await client.call("settings.set", {embeddingModelPath: path.join(dir, "absent.gguf")}).catch((caught: unknown) => caught);
        expect((missing as RemoteCallError).code).toBe("MODEL_NOT_FOUND");
        const kept = await client.call("settings.get", {});
        expect([kept.embeddingModelPath, kept.threads]).toEqual([gguf, null]);

        expect((await client.call("settings.set", {embeddingModelPath: null})).embeddingModelPath).toBeNull();
    });
});

describe("in-process transport", () => {
    it("carries calls, typed results and errors by code", async () => {
        const created = await client.call("conversations.create", {title: "Trip plans", policy: "cloud-allowed"});
        expect(created.policy).toBe("cloud-allowed");

        const renamed = await client.call("conversations.rename", {conversationId: created.id, title: "Trip to Lisbon"});
        expect(renamed.title).toBe("Trip to Lisbon");
        const listed = await client.call("conversations.list", {});
        expect(listed.map((conversation) => conversation.title)).toContain("Trip to Lisbon");

        const error = await client.call("conversations.get", {conversationId: "missing"}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(RemoteCallError);
        expect((error as RemoteCallError).code).toBe("CONVERSATION_NOT_FOUND");

        const refused = await client.call("chat.send", {conversationId: created.id, text: ""}).catch((caught: unknown) => caught);
        expect((refused as RemoteCallError).code).toBe("INVALID_INPUT");
    });

    it("refuses a turn without a model before storing anything", async () => {
        const conversation = await client.call("conversations.create", {});
        const error = await client.call("chat.send", {conversationId: conversation.id, text: "hello"}).catch((caught: unknown) => caught);
        expect((error as RemoteCallError).code).toBe("MODEL_NOT_LOADED");
        const {messages} = await client.call("conversations.get", {conversationId: conversation.id});
        expect(messages).toEqual([]);
    });

    it("refuses a turn asked for the cloud in a local-only conversation, before storing anything", async () => {
        const conversation = await client.call("conversations.create", {});
        const error = await client.call("chat.send", {conversationId: conversation.id, text: "hello", route: "cloud"}).catch((caught: unknown) => caught);
        expect((error as RemoteCallError).code).toBe("CLOUD_DISABLED");
        expect((await client.call("conversations.get", {conversationId: conversation.id})).messages).toEqual([]);
    });

    it("a regenerate refused before it starts (Retry locally without a model) puts the prompt and the blocked reply back", async () => {
        const conversation = await client.call("conversations.create", {policy: "cloud-allowed"});
        servicesOf(core).store.appendMessage(conversation.id, {role: "user", content: "What is in the ledger?", status: "complete"});
        const reply = servicesOf(core).store.appendMessage(conversation.id, {role: "assistant", content: "", status: "streaming", route: "cloud", routeReason: "the user asked for the cloud"});
        const verdict = {kind: "foreign-canary" as const, blocked: true, detail: "The reply carried another install's canary.", findings: []};
        servicesOf(core).store.finishMessage(reply.id, {content: "", status: "blocked", verdict});
        const before = (await client.call("conversations.get", {conversationId: conversation.id})).messages;

        const error = await client.call("chat.regenerate", {conversationId: conversation.id, route: "local"}).catch((caught: unknown) => caught);
        expect((error as RemoteCallError).code).toBe("MODEL_NOT_LOADED");
        const after = (await client.call("conversations.get", {conversationId: conversation.id})).messages;
        const essentials = (message: typeof before[number]) =>
            ({role: message.role, content: message.content, status: message.status, route: message.route, routeReason: message.routeReason, verdict: message.verdict});
        expect(after.map(essentials)).toEqual(before.map(essentials));
        expect(after[1]!.verdict).toMatchObject({kind: "foreign-canary", blocked: true});
    });

    it("delivers core events to subscribers", async () => {
        const seen: Array<ApiEventPayload<"audit.event">> = [];
        const unsubscribe = client.subscribe("audit.event", (event) => seen.push(event));
        const conversation = await client.call("conversations.create", {title: "Evented"});
        await client.call("conversations.setPolicy", {conversationId: conversation.id, policy: "cloud-allowed"});
        await expect.poll(() => seen.length).toBeGreaterThanOrEqual(2);
        unsubscribe();
        expect(seen.map((event) => event.kind)).toEqual(["conversation.created", "conversation.policy"]);
        expect(seen.every((event) => event.conversationId === conversation.id)).toBe(true);
    });

    it("keeps settings, cloud fields included, and never returns the key itself", async () => {
        const updated = await client.call("settings.set", {
            threads: 1, contextSize: 2048, cloudEndpoint: "https://cloud.example/v1", cloudModel: "big-model",
            cloudFallback: true, cloudApiKey: "sk-secret-value"
        });
        expect(updated).toMatchObject({threads: 1, contextSize: 2048, cloud: {endpoint: "https://cloud.example/v1", model: "big-model", fallback: true, apiKeyStored: true}});
        expect(JSON.stringify(updated)).not.toContain("sk-secret-value");
        expect(JSON.stringify(servicesOf(core).settings.all())).not.toContain("sk-secret-value");

        const cleared = await client.call("settings.set", {threads: null, cloudApiKey: null});
        expect(cleared.threads).toBeNull();
        expect(cleared.cloud.apiKeyStored).toBe(false);
    });

    it("reports a missing model file in the model status at once, without starting llama.cpp", async () => {
        const absent = path.join(tempDir("nomodel"), "absent.gguf");
        const requestsBefore = llamaRequests;
        const status = await client.call("model.load", {path: absent});
        expect(status).toMatchObject({state: "error", path: absent, error: {code: "MODEL_NOT_FOUND", message: `No model file at ${absent}: not found or not readable.`}});
        expect(llamaRequests).toBe(requestsBefore);
        expect((await client.call("settings.get", {})).modelPath).toBeNull();
    });

    it("reports a file that is not a GGUF model at once, without starting llama.cpp", async () => {
        const notes = path.join(tempDir("notgguf"), "notes.gguf");
        fs.writeFileSync(notes, "These are notes, not a model.\n");
        const requestsBefore = llamaRequests;
        const status = await client.call("model.load", {path: notes});
        expect(status).toMatchObject({state: "error", error: {code: "MODEL_NOT_GGUF", message: expect.stringContaining("does not start with \"GGUF\"")}});
        expect(llamaRequests).toBe(requestsBefore);
        expect((await client.call("settings.get", {})).modelPath).toBeNull();
    });

    it("refuses to import a missing or non-GGUF file at once, without starting llama.cpp", async () => {
        let importLlamaRequests = 0;
        const modelsDir = tempDir("import-models");
        const withModels = createCoreService(core, {models: {dir: modelsDir, llama: () => {
            importLlamaRequests += 1;
            return loadLlama();
        }}});
        try {
            const notes = path.join(modelsDir, "notes.gguf");
            fs.writeFileSync(notes, "These are notes, not a model.\n");
            expect(await withModels.call("models.import", {path: path.join(modelsDir, "absent.gguf")})).toMatchObject({ok: false, error: {code: "MODEL_NOT_FOUND"}});
            expect(await withModels.call("models.import", {path: notes})).toMatchObject({ok: false, error: {code: "MODEL_NOT_GGUF"}});
            expect(importLlamaRequests).toBe(0);
        } finally {
            withModels.dispose();
        }
    });

    it("rejects pending and later calls once the channel closes", async () => {
        const [coreSide, clientSide, close] = createInProcessChannelPair();
        serveCoreOverChannel(service, coreSide);
        const second = connectCoreClient(clientSide);
        expect(Array.isArray(await second.call("conversations.list", {}))).toBe(true);
        close();
        const error = await second.call("conversations.list", {}).catch((caught: unknown) => caught);
        expect((error as RemoteCallError).details.disconnected).toBe(true);
    });
});


import {describe, expect, it} from "vitest";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("context pool", () => {
    it("evicts the least recently used session (scrubbed) when a new conversation does not fit the budget", async () => {
        const {core: probe} = await createTestCore(modelPath!);
        const contextBytes = servicesOf(probe).engine.pool!.contextBytes;
        await probe.dispose();

        const {core} = await createTestCore(modelPath!, {pool: {budgetBytes: Math.floor(contextBytes * 2.5)}});
        try {
            expect(servicesOf(core).engine.pool!.capacity).toBe(2);
            const [a, b, c] = ["a", "b", "c"].map((title) => core.createConversation({title}));
            await core.sendMessage({conversationId: a!.id, text: "Once upon a time", maxTokens: 8, temperature: 0});
            await core.sendMessage({conversationId: b!.id, text: "The dog", maxTokens: 8, temperature: 0});
            await core.sendMessage({conversationId: a!.id, text: "And then", maxTokens: 8, temperature: 0}); // a is now more recent than b
            const third = asLocalTurn(await core.sendMessage({conversationId: c!.id, text: "A bird", maxTokens: 8, temperature: 0}));

            expect(third.status).toBe("complete");
            expect(servicesOf(core).engine.pool!.conversations().sort()).toEqual([a!.id, c!.id].sort());
            const evicted = core.auditEvents({conversationId: b!.id, kinds: ["scrub.verified", "context.evicted"]});
            expect(evicted.map((event) => event.kind)).toEqual(expect.arrayContaining(["scrub.verified", "context.evicted"]));
            expect(evicted.find((event) => event.kind === "scrub.verified")!.data).toMatchObject({reason: "evict", nonZeroBytes: 0});

            // Resuming the evicted conversation gives it a fresh context, into which its sealed snapshot (saved at the eviction) is restored.
            // (written after the evicting turn's session end, which waits only for the read)
            await expect.poll(() => core.auditEvents({conversationId: b!.id, kinds: ["kv.saved"]}).map((event) => event.data.reason)).toEqual(["evict"]);
            const resumed = asLocalTurn(await core.sendMessage({conversationId: b!.id, text: "What happened next?", maxTokens: 8, temperature: 0}));
            expect(core.auditEvents({conversationId: b!.id, kinds: ["kv.restored"]})).toHaveLength(1);
            expect(resumed.tokens.reused).toBeGreaterThan(0);
            expect(resumed.tokens.prompt).toBeGreaterThan(third.tokens.prompt);
            expect(servicesOf(core).engine.pool!.size).toBe(2);
        } finally {
            await core.dispose();
        }
    });

    it("reuses the conversation's own KV prefix between turns", async () => {
        const {core} = await createTestCore(modelPath!);
        try {
            const conversation = core.createConversation();
            const first = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 16, temperature: 0}));
            const second = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Then what?", maxTokens: 16, temperature: 0}));
            expect(second.isolation!.contextId).toBe(first.isolation!.contextId);
            expect(second.tokens.reused).toBeGreaterThan(first.tokens.prompt - 2);
            expect(second.tokens.evaluated).toBeLessThan(second.tokens.prompt / 2);
        } finally {
            await core.dispose();
        }
    });

    it("ends idle sessions, and every session on unload and shutdown, each with a verified scrub", async () => {
        const {core} = await createTestCore(modelPath!, {pool: {idleTimeoutMs: 150}});
        try {
            const idle = core.createConversation();
            await core.sendMessage({conversationId: idle.id, text: "Hello", maxTokens: 4, temperature: 0});
            // The session leaves the pool first; its snapshot is saved, then the scrub runs and is recorded.
            await expect.poll(() => core.auditEvents({conversationId: idle.id, kinds: ["scrub.verified"]}).map((event) => event.data.reason), {timeout: 10_000})
                .toEqual(["idle"]);
            expect(servicesOf(core).engine.pool!.size).toBe(0);

            const open = core.createConversation();
            await core.sendMessage({conversationId: open.id, text: "Hello", maxTokens: 4, temperature: 0});
            await servicesOf(core).engine.unloadModel();
            expect(core.auditEvents({conversationId: open.id, kinds: ["scrub.verified"]})[0]?.data).toMatchObject({reason: "unload"});
        } finally {
            await core.dispose();
        }
    });

    it("deleting a conversation scrubs its context first", async () => {
        const {core} = await createTestCore(modelPath!);
        try {
            const conversation = core.createConversation();
            await core.sendMessage({conversationId: conversation.id, text: "My account number is 55-1234.", maxTokens: 8, temperature: 0});
            const {scrub} = await core.deleteConversation(conversation.id);
            expect(scrub).toMatchObject({verified: true, reason: "delete", nonZeroBytes: 0});
            expect(core.findConversation(conversation.id)).toBeUndefined();
            expect(servicesOf(core).engine.pool!.size).toBe(0);
        } finally {
            await core.dispose();
        }
    });
});

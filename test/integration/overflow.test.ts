import {describe, expect, it} from "vitest";
import {asLocalTurn} from "../helpers/coreServices.js";
import {proveOverflowRefused} from "../helpers/overflowProof.js";
import {createTestCore} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("turns that do not fit", () => {
    it("refuses a turn larger than the context before evaluating or storing anything, and says by how much", async () => {
        expect((await proveOverflowRefused(modelPath!, "off"))?.gpuLayers).toBe(0);
    });

    it("a reply budget that does not fit is refused too", async () => {
        const {core} = await createTestCore(modelPath!, {}, {}, "off");
        try {
            const conversation = core.createConversation();
            await expect(core.sendMessage({conversationId: conversation.id, text: "Hi", maxTokens: 600, temperature: 0}))
                .rejects.toMatchObject({code: "CONTEXT_OVERFLOW", details: {replyBudget: 600}});
        } finally {
            await core.dispose();
        }
    });

    it("drops the oldest exchanges only under the drop-oldest policy, reports it, and never cuts the newest message", async () => {
        const {core} = await createTestCore(modelPath!, {}, {}, "off");
        try {
            const dropping = core.createConversation({settings: {historyPolicy: "drop-oldest"}});
            const refusing = core.createConversation({settings: {historyPolicy: "refuse"}});
            const longTurn = "The little dog ran in the park with a red ball. ".repeat(6);
            for (const conversation of [dropping, refusing])
                for (let turn = 0; turn < 4; turn++)
                    await core.sendMessage({conversationId: conversation.id, text: longTurn, maxTokens: 24, temperature: 0}).catch(() => undefined);

            const kept = asLocalTurn(await core.sendMessage({conversationId: dropping.id, text: longTurn, maxTokens: 24, temperature: 0}));
            expect(kept.history.droppedMessages).toBeGreaterThan(0);
            expect(kept.history.droppedMessages % 2).toBe(0);
            expect(core.auditEvents({conversationId: dropping.id, kinds: ["history.dropped"]}).length).toBeGreaterThan(0);
            // Dropped from the window, never from the database.
            expect(core.getConversation(dropping.id).messages.length).toBeGreaterThanOrEqual(10);

            await expect(core.sendMessage({conversationId: refusing.id, text: longTurn, maxTokens: 24, temperature: 0}))
                .rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});

            // A newest message that alone does not fit is refused, not truncated, whatever the policy.
            await expect(core.sendMessage({conversationId: dropping.id, text: longTurn.repeat(8), maxTokens: 24, temperature: 0}))
                .rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});
        } finally {
            await core.dispose();
        }
    });
});

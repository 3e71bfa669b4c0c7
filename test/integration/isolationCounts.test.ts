import {describe, expect, it} from "vitest";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("isolation report on a long conversation", () => {
    it("counts every session, scrub and turn of a conversation with more than 500 audit events, and lists every turn", async () => {
        const {core} = await createTestCore(modelPath!, {contextSize: 256});
        try {
            const conversation = core.createConversation({title: "long"});
            const sessions = 90; // about 6 audit events each
            const replies: number[] = [];
            for (let session = 0; session < sessions; session++) {
                const turn = await core.sendMessage({conversationId: conversation.id, text: `Day ${session}.`, maxTokens: 1, temperature: 0});
                replies.push(turn.assistantMessageId);
                await core.closeConversation(conversation.id);
            }
            const trail = core.auditEvents({conversationId: conversation.id, limit: 100_000});
            expect(trail.length).toBeGreaterThan(500);

            const report = core.isolationReport(conversation.id);
            expect(report.scrubs).toEqual({verified: sessions, failed: 0});
            expect(report.routes).toEqual({local: sessions, cloud: 0});
            expect(report.turns.map((turn) => turn.messageId)).toEqual(replies);
            expect(report.lastScrub).toMatchObject({verified: true, reason: "close"});
        } finally {
            await core.dispose();
        }
    });
});

import {describe, expect, it} from "vitest";
import {ContextOverflowError} from "../../src/core/common/errors.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";
import type {GpuSetting} from "../../src/core/common/api/types.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

/** A turn larger than the context is refused before anything is evaluated or stored, and the error says by how much. */
async function proveOverflowRefused(gpu: GpuSetting) {
    const {core} = await createTestCore(modelPath!, {}, {}, gpu);
    try {
        const conversation = core.createConversation();
        await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 8, temperature: 0});
        const context = servicesOf(core).engine.pool!.peek(conversation.id)!;
        const tokensBefore = context.tokensInContext;

        const error = await core.sendMessage({conversationId: conversation.id, text: "word ".repeat(600), maxTokens: 64, temperature: 0})
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ContextOverflowError);
        const overflow = error as ContextOverflowError;
        expect(overflow.details).toMatchObject({contextSize: 512, replyBudget: 64});
        expect(overflow.details.overBy).toBe((overflow.details.neededTokens as number) - 512);
        expect(overflow.message).toMatch(/needs \d+ tokens \(\d+ prompt \+ 64 reply budget\) but the context holds 512: \d+ over/);

        expect(context.tokensInContext).toBe(tokensBefore);
        expect(core.getConversation(conversation.id).messages).toHaveLength(2);
        expect(core.auditEvents({conversationId: conversation.id, kinds: ["turn.refused"]})).toHaveLength(1);
        return core.modelInfo();
    } finally {
        await core.dispose();
    }
}

describe.skipIf(modelPath == null || vulkan == null)(`a turn that does not fit, with the KV on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    it("is refused before anything is evaluated on the device or stored, and the error says by how much", async () => {
        const info = await proveOverflowRefused("vulkan");
        expect(info).toMatchObject({gpu: "vulkan", kvReadBack: "verified"});
        expect(info!.gpuLayers).toBeGreaterThan(0);
    });
});

describe.skipIf(modelPath == null)("turns that do not fit", () => {
    it("refuses a turn larger than the context before evaluating or storing anything, and says by how much", async () => {
        expect((await proveOverflowRefused("off"))?.gpuLayers).toBe(0);
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

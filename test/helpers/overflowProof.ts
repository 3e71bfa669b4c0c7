// The overflow refusal, shared by overflow.test.ts (CPU) and overflow.vulkan.test.ts (the KV on the Vulkan device, run alone).
import {expect} from "vitest";
import {ContextOverflowError} from "../../src/core/common/errors.js";
import type {GpuSetting} from "../../src/core/common/api/types.js";
import {servicesOf} from "./coreServices.js";
import {createTestCore} from "./tempCore.js";

/** A turn larger than the context is refused before anything is evaluated or stored, and the error says by how much. */
export async function proveOverflowRefused(modelPath: string, gpu: GpuSetting) {
    const {core} = await createTestCore(modelPath, {}, {}, gpu);
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

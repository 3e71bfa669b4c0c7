import {describe, expect, it} from "vitest";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("generation", () => {
    it("is deterministic at temperature 0 and for a fixed seed, and streams what it returns", async () => {
        const {core} = await createTestCore(modelPath!);
        try {
            const run = async (options: {temperature: number, seed?: number}) => {
                const conversation = core.createConversation();
                const pieces: string[] = [];
                const result = await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 40, ...options},
                    {onText: (piece) => pieces.push(piece)});
                expect(pieces.join("")).toBe(result.reply);
                await core.closeConversation(conversation.id);
                return result.reply;
            };
            expect(await run({temperature: 0})).toBe(await run({temperature: 0}));
            const seeded = await run({temperature: 1, seed: 42});
            expect(await run({temperature: 1, seed: 42})).toBe(seeded);
            const others = new Set([await run({temperature: 1, seed: 1}), await run({temperature: 1, seed: 2}), await run({temperature: 1, seed: 3})]);
            expect(others.size).toBeGreaterThan(1);
        } finally {
            await core.dispose();
        }
    });

    it("stops mid-stream on abort and keeps what was produced as an interrupted reply", async () => {
        const {core} = await createTestCore(modelPath!, {contextSize: 2048});
        try {
            const conversation = core.createConversation();
            const controller = new AbortController();
            let pieces = 0;
            const result = await core.sendMessage({conversationId: conversation.id, text: "Tell me a long story", maxTokens: 1000, temperature: 0.8, seed: 3},
                {signal: controller.signal, onText: () => {
                    if (++pieces === 5)
                        controller.abort();
                }});
            expect(result).toMatchObject({finishReason: "aborted", status: "interrupted"});
            expect(result.tokens.generated).toBeLessThan(10);
            expect(servicesOf(core).store.getMessage(result.assistantMessageId)).toMatchObject({status: "interrupted", content: result.reply});
        } finally {
            await core.dispose();
        }
    });
});

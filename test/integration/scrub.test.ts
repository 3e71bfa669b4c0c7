import fs from "node:fs";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {LlamaModel} from "node-llama-cpp";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {asLocalTurn} from "../helpers/coreServices.js";
import {fillWithSecret, greedyContinuation} from "../helpers/kvScrubProbes.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("KV scrub on the real model", () => {
    let model: LlamaModel;
    let scratch: PrivateScratchDir;

    beforeAll(async () => {
        // The CPU explicitly: where this process has named the Vulkan device, `auto` would find it too.
        model = await (await loadLlama("off")).loadModel({modelPath: modelPath!});
        scratch = PrivateScratchDir.create();
    });
    afterAll(async () => {
        scratch.dispose();
        await model.dispose();
    });

    for (const flashAttention of [true, false])
        it(`zeroes every KV cell and proves it (flash attention ${flashAttention ? "on" : "off"}, V ${flashAttention ? "rows" : "transposed"})`, async () => {
            const options = {contextSize: 256, threads: 1, flashAttention};
            const scrubber = await KvScrubber.learn(model, options, scratch);
            const context = await model.createContext(options);
            const sequence = context.getSequence();
            try {
                // Before: the conversation's KV holds real, non-zero data (so the check below can fail).
                const dirty = await fillWithSecret(sequence, 40);
                expect(dirty.nonZeroPayloadBytes).toBeGreaterThan(dirty.payloadBytes / 2);

                const result = await scrubber.zeroAndVerify(sequence);
                expect(result).toMatchObject({verified: true, nonZeroBytes: 0, kvCells: 256, cellsReadBack: 256, failure: null});
                expect(result.bytesChecked).toBe(scrubber.kvBytes);
                expect(result.bytesZeroed).toBe(scrubber.kvBytes);
                expect(scrubber.layout?.vTransposed).toBe(!flashAttention);
                // The scratch folder is private and left empty.
                expect(fs.statSync(scratch.path).mode & 0o777).toBe(0o700);
                expect(fs.readdirSync(scratch.path)).toEqual([]);

                // The context still works afterwards (clean), and greedy output is what a fresh one gives.
                expect(await greedyContinuation(sequence)).toContain("there was a little girl named Lily");
            } finally {
                await context.dispose();
            }
        });

    it("reports an unverifiable scrub as a failure instead of passing it", async () => {
        const options = {contextSize: 256, threads: 1};
        const scrubber = await KvScrubber.learn(model, options, scratch);
        const context = await model.createContext(options);
        const sequence = context.getSequence();
        await context.dispose(); // the native memory is gone: nothing can be verified
        const result = await scrubber.zeroAndVerify(sequence);
        expect(result.verified).toBe(false);
        expect(result.failure).toBeTruthy();
    });

    it("records every session end's scrub in the audit log, and the conversation's context is never reused", async () => {
        const {core} = await createTestCore(modelPath!, {}, {}, "off");
        try {
            const conversation = core.createConversation({title: "secret"});
            const first = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "My PIN is 9921.", maxTokens: 16, temperature: 0}));
            const report = await core.closeConversation(conversation.id);
            expect(report).toMatchObject({verified: true, nonZeroBytes: 0, reason: "close", contextId: first.isolation!.contextId});
            expect(report!.bytesChecked).toBe(first.isolation!.kvBytes);

            const second = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Tell me a story.", maxTokens: 8, temperature: 0}));
            expect(second.isolation!.contextId).not.toBe(first.isolation!.contextId);
            expect(second.tokens.reused).toBe(0);

            const isolation = core.isolationReport(conversation.id);
            expect(isolation.events.map((event) => event.kind)).toEqual(expect.arrayContaining(["context.created", "turn.local", "scrub.verified", "context.disposed"]));
            // Each turn names its reply and the context that served it.
            expect(isolation.turns).toEqual([
                expect.objectContaining({route: "local", messageId: first.assistantMessageId, contextId: first.isolation.contextId}),
                expect.objectContaining({route: "local", messageId: second.assistantMessageId, contextId: second.isolation.contextId})
            ]);
            const scrubEvent = core.auditEvents({conversationId: conversation.id, kinds: ["scrub.verified"]})[0]!;
            expect(scrubEvent.data).toMatchObject({bytesChecked: report!.bytesChecked, nonZeroBytes: 0, kvCells: report!.kvCells});
        } finally {
            await core.dispose();
        }
    });
});

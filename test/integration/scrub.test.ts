import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {LlamaContextSequence, LlamaModel} from "node-llama-cpp";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {readKvState} from "../../src/core/node/engine/KvStateFile.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {asLocalTurn} from "../helpers/coreServices.js";
import {forceDeviceReadBackFault, forcedDeviceReadBackProblem} from "../helpers/forceDeviceReadBackFault.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";
import {isCleanroomError} from "../../src/core/common/errors.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

describe.skipIf(modelPath == null)("KV scrub on the real model", () => {
    let model: LlamaModel;
    let scratch: PrivateScratchDir;

    beforeAll(async () => {
        // The CPU explicitly: once this process has named the Vulkan device (below), `auto` would find it too.
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

// The same proofs where the KV lives in device memory: the Vulkan backend (Mesa's software device where there is no GPU).
describe.skipIf(modelPath == null || vulkan == null)(`KV scrub with the KV on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    it("offloads every layer, zeroes the KV on the device and reads it back from there, and the context then answers as a fresh one", async () => {
        const options = {contextSize: 256, threads: 1};
        const model = await vulkan!.llama.loadModel({modelPath: modelPath!, gpuLayers: {fitContext: {contextSize: 256}}});
        const scratch = PrivateScratchDir.create();
        try {
            expect(model.gpuLayers).toBe(model.fileInsights.totalLayers);
            const scrubber = await KvScrubber.learn(model, options, scratch, {gpuLayers: model.gpuLayers});
            // A token evaluated on the device read back non-zero in every offloaded layer: the read-back reads the device.
            expect(scrubber.kvReadBack).toEqual({kvReadBack: "verified", problem: null, deviceLayers: scrubber.layout!.layers.map((_, index) => index)});

            const context = await model.createContext(options);
            const sequence = context.getSequence();
            try {
                const dirty = await fillWithSecret(sequence, 16);
                expect(dirty.nonZeroBytesPerLayer.every((bytes) => bytes > 0)).toBe(true);

                const result = await scrubber.zeroAndVerify(sequence);
                expect(result).toMatchObject({verified: true, nonZeroBytes: 0, kvCells: 256, cellsReadBack: 256, failure: null});
                expect(result.bytesChecked).toBe(scrubber.kvBytes);

                expect(await greedyContinuation(sequence)).toContain("there was a little girl named Lily");
            } finally {
                await context.dispose();
            }
        } finally {
            scratch.dispose();
            await model.dispose();
        }
    });

    it("where the device's KV cannot be seen to read back, no scrub is claimed verified: the model says so and closing a conversation is a security fault", async () => {
        const undo = forceDeviceReadBackFault();
        try {
            const {core} = await createTestCore(modelPath!, {}, {}, "vulkan");
            try {
                const info = servicesOfModel(core);
                expect(info).toMatchObject({gpu: "vulkan", kvReadBack: "unverified", kvReadBackProblem: forcedDeviceReadBackProblem});
                expect(info.gpuLayers).toBeGreaterThan(0);
                expect(core.auditEvents({kinds: ["security.fault"]}).map((event) => String(event.data.what))).toEqual([
                    expect.stringContaining("KV read-back from the GPU could not be verified")
                ]);

                const conversation = core.createConversation({title: "secret"});
                await core.sendMessage({conversationId: conversation.id, text: "My PIN is 9921.", maxTokens: 8, temperature: 0});
                const closing = await core.closeConversation(conversation.id).catch((error: unknown) => error);
                expect(isCleanroomError(closing, "SCRUB_UNVERIFIED")).toBe(true);
                expect(core.auditEvents({conversationId: conversation.id, kinds: ["scrub.failed"]})[0]!.data).toMatchObject({
                    nonZeroBytes: 0, failure: expect.stringContaining("could not be verified")
                });
                expect(core.auditEvents({conversationId: conversation.id, kinds: ["scrub.verified"]})).toEqual([]);
            } finally {
                await core.dispose().catch(() => undefined);
            }
        } finally {
            undo();
        }
    });
});

function servicesOfModel(core: Awaited<ReturnType<typeof createTestCore>>["core"]) {
    const info = core.modelInfo();
    if (info == null)
        throw new Error("no model loaded");
    return info;
}

/** Evaluates a secret and `tokens` generated after it, then reads the sequence's KV state back (what a scrub must erase). */
async function fillWithSecret(sequence: LlamaContextSequence, tokens: number) {
    let generated = 0;
    for await (const token of sequence.evaluate(sequence.model.tokenize("The secret password is swordfish 4417. Once upon a time"), {temperature: 0})) {
        void token;
        if (++generated >= tokens)
            break;
    }
    const before = path.join(tempDir("scrub"), "before.state");
    await sequence.saveStateToFile(before);
    try {
        return await readKvState(before);
    } finally {
        fs.rmSync(before);
    }
}

/** Ten greedy tokens after "Once upon a time". */
async function greedyContinuation(sequence: LlamaContextSequence) {
    const tokens = [];
    for await (const token of sequence.evaluate(sequence.model.tokenize("Once upon a time"), {temperature: 0})) {
        tokens.push(token);
        if (tokens.length >= 10)
            break;
    }
    return sequence.model.detokenize(tokens);
}

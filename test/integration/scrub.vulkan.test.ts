import {describe, expect, it} from "vitest";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {forceDeviceReadBackFault, forcedDeviceReadBackProblem} from "../helpers/forceDeviceReadBackFault.js";
import {fillWithSecret, greedyContinuation} from "../helpers/kvScrubProbes.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";
import {isCleanroomError} from "../../src/core/common/errors.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

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

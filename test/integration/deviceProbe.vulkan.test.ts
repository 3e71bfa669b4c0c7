import {afterEach, describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {forceDeviceProbeFault, forcedDeviceProbeProblem} from "../helpers/forceDeviceProbeFault.js";
import {createTestCore} from "../helpers/tempCore.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();
/** `--import`ed into the test build's CLI (testBuild.ts): the device's isolation probe is judged failed. */
const forcedFault = await cliWithPreloads("forceDeviceProbeFault.preload.ts");

describe.skipIf(modelPath == null || vulkan == null)(`the device probe on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    let restore: (() => void) | null = null;
    afterEach(() => {
        restore?.();
        restore = null;
    });

    it("the first load on the device runs the probe, which passes, and the model runs there; the next load takes the cached verdict and runs none", async () => {
        const {core} = await createTestCore(modelPath!, {}, {}, "vulkan");
        try {
            const first = core.modelInfo()!;
            expect(first).toMatchObject({gpu: "vulkan", deviceCheck: {device: vulkan!.device, passed: true, problem: null, source: "probed"}});
            expect(first.gpuLayers).toBeGreaterThan(0);
            const probes = core.auditEvents({kinds: ["device.probed"]});
            expect(probes).toHaveLength(1);
            expect(probes[0]!.data).toMatchObject({device: vulkan!.device, architecture: "llama", passed: true});
            console.log(`device probe on ${vulkan!.device}: ${probes[0]!.data.durationMs} ms (llama.cpp ${String(probes[0]!.data.llamaBuild)}, driver ${String(probes[0]!.data.driver)})`);

            const second = await core.loadModel(modelPath!);
            expect(second).toMatchObject({gpu: "vulkan", deviceCheck: {passed: true, source: "cached", durationMs: first.deviceCheck!.durationMs}});
            expect(core.auditEvents({kinds: ["device.probed"]})).toHaveLength(1);
            expect(core.auditEvents({kinds: ["security.fault"]})).toEqual([]);
        } finally {
            await core.dispose();
        }
    }, 600_000);

    it("forced fault: a device that fails the probe is not used; the model runs on the CPU and says why, in the model's status and the audit", async () => {
        restore = forceDeviceProbeFault();
        const {core} = await createTestCore(modelPath!, {}, {}, "vulkan");
        try {
            expect(core.modelInfo()).toMatchObject({
                gpuRequested: "vulkan", gpu: null, gpuDevice: null, gpuLayers: 0, kvReadBack: "host",
                deviceCheck: {device: vulkan!.device, passed: false, problem: forcedDeviceProbeProblem, source: "probed"}
            });
            expect(core.auditEvents({kinds: ["security.fault"]}).map((event) => String(event.data.what))).toEqual([
                `the GPU device ${vulkan!.device} failed the isolation probe (${forcedDeviceProbeProblem}): it is not used, the model runs on the CPU`
            ]);
            // A turn still runs, on the CPU, and its session ends verified.
            const conversation = core.createConversation({title: "after the refused device"});
            await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0});
            expect((await core.closeConversation(conversation.id))?.verified).toBe(true);
        } finally {
            await core.dispose();
        }
    }, 600_000);

    it("forced fault: chat --json --gpu vulkan runs on the CPU and its JSON says the device failed the probe, and why", async () => {
        const {env, db} = hermeticCliEnv("device-probe-fault", {CLEANROOM_GPU: undefined});
        const run = await runCliCapturing([
            "chat", "--model", modelPath!, "--db", db, "--prompt", "Once upon a time", "--max-tokens", "4", "--temperature", "0", "--threads", "1", "--gpu", "vulkan", "--json"
        ], {env, ...forcedFault});
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({
            gpu: null, gpuLayers: 0, isolation: {kvReadBack: "host", scrub: {verified: true}},
            deviceCheck: {device: vulkan!.device, passed: false, problem: forcedDeviceProbeProblem, source: "probed"}
        });
    }, 600_000);
});

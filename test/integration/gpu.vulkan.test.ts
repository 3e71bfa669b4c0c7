import {describe, expect, it} from "vitest";
import {chatJson, cleanroom} from "../helpers/gpuCli.js";
import {requireTestModel} from "../helpers/testModel.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

describe.skipIf(modelPath == null || vulkan == null)(`the isolation self-test on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    it("selftest --gpu vulkan passes all 5 checks with the model's layers and KV on the device, and says where it ran", async () => {
        const run = await cleanroom("selftest-vulkan", ["selftest", "--model", modelPath!, "--gpu", "vulkan", "--threads", "1", "--json"]);
        expect(run.code, run.stderr).toBe(0);
        const report = JSON.parse(run.stdout);
        expect(report).toMatchObject({passed: true, gpu: "vulkan", gpuDevice: vulkan!.device, kvReadBack: "verified"});
        expect(report.gpuLayers).toBeGreaterThan(0);
        expect(report.gpuLayers).toBe(report.modelLayers);
        expect(report.checks.map((check: {name: string, passed: boolean}) => [check.name, check.passed])).toEqual([
            ["scrub", true], ["differential", true], ["overflow", true], ["ownership", true], ["shutdown", true]
        ]);
        expect(report.checks[0].detail).toContain("KV read back from the device, verified");
        expect(report.checks[1].detail).toContain("vulkan in both processes");
    }, 600_000);

    it("chat --json --gpu vulkan reports the backend, the device and the layers offloaded", async () => {
        const run = await chatJson("chat-vulkan", modelPath!, ["--gpu", "vulkan"]);
        expect(run.code, run.stderr).toBe(0);
        const turn = JSON.parse(run.stdout);
        expect(turn).toMatchObject({gpu: "vulkan", gpuDevice: vulkan!.device, isolation: {kvReadBack: "verified", scrub: {verified: true, nonZeroBytes: 0}}});
        expect(turn.gpuLayers).toBeGreaterThan(0);
    }, 300_000);
});

import {describe, expect, it} from "vitest";
import {chooseVulkanVisibleDevices} from "../../src/core/node/engine/vulkanDevices.js";

describe("which Vulkan devices --gpu vulkan makes visible", () => {
    it("never forces device 0 on a machine where ggml finds a GPU by itself", () => {
        expect(chooseVulkanVisibleDevices({environmentValue: undefined, ggmlDefaultDevices: ["NVIDIA GeForce RTX 4060"]}))
            .toEqual({set: null, reason: expect.stringContaining("NVIDIA GeForce RTX 4060")});
    });

    it("names the CPU-type device 0 when ggml finds no GPU-type device, since Vulkan was asked for by name", () => {
        expect(chooseVulkanVisibleDevices({environmentValue: undefined, ggmlDefaultDevices: []}))
            .toEqual({set: "0", reason: expect.stringContaining("CPU-type")});
        expect(chooseVulkanVisibleDevices({environmentValue: "", ggmlDefaultDevices: []}).set).toBe("0");
    });

    it("keeps the user's GGML_VK_VISIBLE_DEVICES as it is", () => {
        expect(chooseVulkanVisibleDevices({environmentValue: "1", ggmlDefaultDevices: null}))
            .toEqual({set: null, reason: expect.stringContaining("GGML_VK_VISIBLE_DEVICES=1, from the environment")});
    });
});

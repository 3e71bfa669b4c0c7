import {describe, expect, it} from "vitest";
import {proveOverflowRefused} from "../helpers/overflowProof.js";
import {requireTestModel} from "../helpers/testModel.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

describe.skipIf(modelPath == null || vulkan == null)(`a turn that does not fit, with the KV on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    it("is refused before anything is evaluated on the device or stored, and the error says by how much", async () => {
        const info = await proveOverflowRefused(modelPath!, "vulkan");
        expect(info).toMatchObject({gpu: "vulkan", kvReadBack: "verified"});
        expect(info!.gpuLayers).toBeGreaterThan(0);
    });
});

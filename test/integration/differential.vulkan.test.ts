import {describe, it} from "vitest";
import {proveDifferential} from "../helpers/differentialProof.js";
import {requireTestModel} from "../helpers/testModel.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();

describe.skipIf(modelPath == null || vulkan == null)(`differential isolation proof with the KV on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    // A software Vulkan device is slow and uses every core: two pairs (A closed, A still open), one fresh process at a time.
    const pairs = 2;
    it(`B after A on Vulkan is bit-identical to B in a fresh Vulkan process (${pairs} random pairs)`,
        () => proveDifferential(modelPath!, "vulkan", pairs, {parallelFresh: 1}), 600_000);
});

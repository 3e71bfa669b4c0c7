import type {Llama} from "node-llama-cpp";
import {isCleanroomError} from "../../src/core/common/errors.js";
import {llamaGpuChoice, loadLlama} from "../../src/core/node/engine/loadLlama.js";

/**
 * The Vulkan backend as `--gpu vulkan` loads it (Mesa's software device where there is no GPU:
 * `apt-get install -y mesa-vulkan-drivers`), or `null` with a warning that says why the Vulkan tests
 * skip. Only a machine with no Vulkan device at all skips; under CI=true that is a failure, since
 * CI installs the software device.
 */
export async function requireVulkan(): Promise<{llama: Llama, device: string} | null> {
    try {
        const llama = await loadLlama("vulkan", {processDefault: false});
        return {llama, device: (await llamaGpuChoice(llama)).device ?? "unnamed device"};
    } catch (error) {
        if (!isCleanroomError(error, "GPU_UNAVAILABLE"))
            throw error;
        if (process.env.CI === "true")
            throw new Error(`No Vulkan device (${error.message}). Under CI the software device must be present: apt-get install -y mesa-vulkan-drivers.`);
        console.warn(`Skipping the Vulkan tests: no Vulkan device here (${error.message}). apt-get install -y mesa-vulkan-drivers gives a software one.`);
        return null;
    }
}

import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "./cliEnv.js";

// The CLI runs of gpu.test.ts (CPU) and gpu.vulkan.test.ts (the Vulkan device, run alone).

/**
 * The CLI as a user runs it, in its own home and temp folders. GGML_VK_VISIBLE_DEVICES is removed
 * (a test process that loaded Vulkan set it), so each CLI makes its own device choice.
 */
export function cleanroom(label: string, args: string[]) {
    const {env} = hermeticCliEnv(label, {GGML_VK_VISIBLE_DEVICES: undefined, CLEANROOM_GPU: undefined});
    return runCliCapturing(args, {env});
}

/** `chat --json` of 8 greedy tokens after "Once upon a time", with the `--gpu` arguments given. */
export function chatJson(label: string, modelPath: string, gpu: string[]) {
    return cleanroom(label, ["chat", "--model", modelPath, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json", ...gpu]);
}

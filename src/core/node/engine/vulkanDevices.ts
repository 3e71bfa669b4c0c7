import {execFile} from "node:child_process";
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";

/** ggml's Vulkan device list: indices into the Vulkan instance's physical devices, comma separated. */
export const vulkanVisibleDevicesVariable = "GGML_VK_VISIBLE_DEVICES";

/** Which Vulkan devices `--gpu vulkan` makes visible to ggml, and why (shown in the audit log). */
export type VulkanDeviceChoice = {
    /** The value Cleanroom sets `GGML_VK_VISIBLE_DEVICES` to; `null`: it sets nothing. */
    set: string | null,
    reason: string
};

/**
 * The rule for `--gpu vulkan` (the app's `vulkan` setting), decided before ggml's Vulkan backend
 * starts (it reads the variable once per process):
 * - `GGML_VK_VISIBLE_DEVICES` given in the environment: used as it is; it is the user's choice.
 * - Otherwise, when ggml on its own finds devices (GPUs: discrete first, else integrated), nothing
 *   is set: a machine with a real GPU is never forced onto device 0, which may be another one.
 * - When it finds none, every Vulkan device there is is CPU-type (a software device such as Mesa's
 *   llvmpipe, which ggml skips unless named) or there is no device at all: the user asked for
 *   Vulkan by name, so device 0 is named. With no device at all the backend still finds none, and
 *   the load fails with `GPU_UNAVAILABLE`.
 * `auto` never names a device: a software device is far slower than the CPU path itself.
 */
export function chooseVulkanVisibleDevices({environmentValue, ggmlDefaultDevices}: {
    environmentValue: string | undefined,
    /** The devices ggml picks with the variable unset (`probeVulkanDevices`); `null` when not asked (the variable is given). */
    ggmlDefaultDevices: string[] | null
}): VulkanDeviceChoice {
    if (environmentValue != null && environmentValue !== "")
        return {set: null, reason: `${vulkanVisibleDevicesVariable}=${environmentValue}, from the environment`};
    if (ggmlDefaultDevices != null && ggmlDefaultDevices.length > 0)
        return {set: null, reason: `ggml's own choice of GPU devices (${ggmlDefaultDevices.join(", ")})`};
    return {set: "0", reason: `${vulkanVisibleDevicesVariable}=0: ggml found no GPU-type Vulkan device, and --gpu vulkan was asked for, so the CPU-type device 0 is named`};
}

/**
 * The Vulkan devices ggml uses by itself (`GGML_VK_VISIBLE_DEVICES` unset), asked of a child
 * process, since ggml enumerates devices once per process. About one process start and one load of
 * node-llama-cpp's Vulkan binary; only `--gpu vulkan` without the variable pays it. `[]` when the
 * probe fails.
 */
export async function probeVulkanDevices(): Promise<string[]> {
    const script = "const {getLlama, LlamaLogLevel} = await import(process.argv[1]);" +
        "const llama = await getLlama({gpu: 'vulkan', build: 'never', logLevel: LlamaLogLevel.disabled});" +
        "process.stdout.write(JSON.stringify(llama.gpu === 'vulkan' && llama.supportsGpuOffloading ? await llama.getGpuDeviceNames() : []));" +
        "await llama.dispose();";
    const environment: NodeJS.ProcessEnv = {...process.env, ELECTRON_RUN_AS_NODE: "1"};
    delete environment[vulkanVisibleDevicesVariable];
    const moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve("node-llama-cpp")).href;
    const stdout = await new Promise<string>((resolve) => {
        execFile(process.execPath, ["--input-type=module", "-e", script, moduleUrl], {env: environment, encoding: "utf8", timeout: 60_000},
            (_error, output) => resolve(output));
    });
    try {
        const devices: unknown = JSON.parse(stdout);
        return Array.isArray(devices) ? devices.filter((device): device is string => typeof device === "string") : [];
    } catch {
        return [];
    }
}

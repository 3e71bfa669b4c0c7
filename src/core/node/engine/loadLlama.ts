import {getLlama, LlamaLogLevel, type Llama} from "node-llama-cpp";
import "./ggufReaderBuffer.js";
import {GpuSettingSchema} from "../../common/api/gpuSchemas.js";
import type {GpuBackend, GpuSetting} from "../../common/api/types.js";
import {CleanroomError} from "../../common/errors.js";
import {gpuProbeFingerprint, readGpuProbe, writeGpuProbe} from "./gpuProbeCache.js";
import {cmakeOptionsToLoad, llamaBuildSetup} from "./localLlamaBuild.js";
import {chooseVulkanVisibleDevices, probeVulkanDevices, vulkanVisibleDevicesVariable, type VulkanDeviceChoice} from "./vulkanDevices.js";

/** How a process's `Llama` came to run where it runs (see `llamaGpuChoice`). */
export type LlamaGpuChoice = {
    /** The setting or flag it was loaded for. */
    requested: GpuSetting,
    /** The backend offloading can use, `null`: none (the CPU), even when a GPU binary was loaded. */
    backend: GpuBackend,
    /** The first device's name, `null` on the CPU. */
    device: string | null,
    /** With `vulkan`: which devices were made visible to ggml, and why. */
    vulkanDevices: VulkanDeviceChoice | null
};

const loaded = new Map<GpuSetting, Promise<Llama>>();
const choices = new WeakMap<Llama, LlamaGpuChoice>();
let primary: GpuSetting | null = null;

/** `CLEANROOM_GPU` when it names a valid setting, else `auto`. */
export function gpuSettingFromEnvironment(): GpuSetting {
    const parsed = GpuSettingSchema.safeParse(process.env.CLEANROOM_GPU);
    return parsed.success ? parsed.data : "auto";
}

/**
 * The process's `Llama` (the native backend) for a GPU setting, loaded once per setting. Without
 * `gpu`: the one this process loaded first (every part of a process shares it), else
 * `CLEANROOM_GPU`, else `auto`. `processDefault: false` (tests that also use another backend):
 * this call does not make its setting the process's.
 *
 * - `auto`: node-llama-cpp's own choice (Metal on macOS; CUDA, then Vulkan, on Linux and Windows).
 *   Where the binary it picks finds no usable device, the model runs on the CPU binary (`backend: null`).
 *   The answer is remembered per machine, driver and llama.cpp build (`loadAuto`).
 *   CPU-type Vulkan devices (Mesa's llvmpipe) are not usable here: ggml skips them unless named.
 * - `metal`, `cuda`, `vulkan`: that backend with a usable device, else `GPU_UNAVAILABLE`. For
 *   `vulkan` see `chooseVulkanVisibleDevices`: a CPU-type device is named only when it is the only
 *   kind there is.
 * - `off`: the CPU binary.
 *
 * A CPU build made here (`cleanroom engine build`, OpenMP threads) is used when present and the CPU is
 * asked for (`off`), else the prebuilt binary; CLEANROOM_LLAMA_BUILD=prebuilt keeps the prebuilt binary.
 */
export function loadLlama(gpu?: GpuSetting, {processDefault = true}: {processDefault?: boolean} = {}): Promise<Llama> {
    const setting = gpu ?? primary ?? gpuSettingFromEnvironment();
    if (processDefault)
        primary ??= setting;
    let llama = loaded.get(setting);
    if (llama == null) {
        llama = load(setting);
        loaded.set(setting, llama);
        // A failed load is not remembered: the next call tries again.
        llama.catch(() => loaded.delete(setting));
    }
    return llama;
}

/** What `loadLlama` chose for this `Llama`; for one made elsewhere (tests, benches), what it can tell of it. */
export async function llamaGpuChoice(llama: Llama): Promise<LlamaGpuChoice> {
    const known = choices.get(llama);
    if (known != null)
        return known;
    const backend = await usableBackend(llama);
    return {requested: llama.gpu === false ? "off" : llama.gpu, backend, device: backend == null ? null : (await llama.getGpuDeviceNames())[0] ?? null, vulkanDevices: null};
}

async function load(setting: GpuSetting): Promise<Llama> {
    const vulkanDevices = setting === "vulkan" ? await chooseVulkanDevicesForThisProcess() : null;
    let llama: Llama;
    try {
        llama = setting === "auto" ? await loadAuto() : await getLlamaFor(setting === "off" ? false : setting);
    } catch (error) {
        if (setting === "auto" || setting === "off")
            throw error;
        throw gpuUnavailable(setting, `node-llama-cpp has no working ${setting} binary here (${error instanceof Error ? error.message : String(error)})`, error);
    }
    const backend = await usableBackend(llama);
    if (setting !== "auto" && setting !== "off" && backend !== setting) {
        await llama.dispose();
        throw gpuUnavailable(setting, backend == null && llama.gpu === setting
            ? `the ${setting} backend loaded but found no usable device`
            : `node-llama-cpp loaded ${llama.gpu === false ? "the CPU binary" : `the ${llama.gpu} binary`} instead`);
    }
    choices.set(llama, {requested: setting, backend, device: backend == null ? null : (await llama.getGpuDeviceNames())[0] ?? null, vulkanDevices});
    return llama;
}

/**
 * `auto`: the binary remembered for this machine, driver and build (`gpuProbeCache`), else
 * node-llama-cpp's own search (it tests each GPU binary in a child process: about 0.1 s a process
 * on a machine without a GPU), remembered for the next process. A GPU binary that finds no usable
 * device is swapped for the CPU binary (the local CPU build when `cleanroom engine build` made one),
 * so that every process on this machine runs the same build whether or not it probed.
 */
async function loadAuto(): Promise<Llama> {
    const fingerprint = gpuProbeFingerprint();
    const remembered = readGpuProbe(fingerprint);
    if (remembered != null) {
        try {
            const llama = await getLlamaFor(remembered);
            if (remembered === false || await usableBackend(llama) === remembered)
                return llama;
            await llama.dispose();
        } catch {
            // the remembered binary no longer loads: search again
        }
    }
    let llama = await getLlamaFor("auto");
    if (llama.gpu !== false && await usableBackend(llama) == null) {
        await llama.dispose();
        llama = await getLlamaFor(false);
    }
    writeGpuProbe(fingerprint, await usableBackend(llama) ?? false);
    return llama;
}

function getLlamaFor(gpu: "auto" | "metal" | "cuda" | "vulkan" | false) {
    return getLlama({
        gpu,
        build: "never",
        // The local build when one is there to load (node-llama-cpp's own folder, whatever a test's stand-in builds); else the prebuilt binary.
        cmakeOptions: useLocalBuild() ? cmakeOptionsToLoad(llamaBuildSetup({}).localBuildsDirectory) : {},
        logLevel: LlamaLogLevel.error,
        // llama.cpp reports bad states through the log as well as return codes; errors alone are kept.
        logger(level, message) {
            if (level === LlamaLogLevel.error && process.env.CLEANROOM_DEBUG === "1")
                process.stderr.write(`[llama.cpp] ${message}\n`);
        }
    });
}

function useLocalBuild() {
    return process.env.CLEANROOM_LLAMA_BUILD !== "prebuilt";
}

/** The backend offloading can use: a GPU binary with at least one device, else `null` (the CPU). */
async function usableBackend(llama: Llama): Promise<GpuBackend> {
    if (llama.gpu === false || !llama.supportsGpuOffloading)
        return null;
    return (await llama.getGpuDeviceNames()).length > 0 ? llama.gpu : null;
}

/** Applies `chooseVulkanVisibleDevices` to this process's environment, before ggml's Vulkan backend starts. */
async function chooseVulkanDevicesForThisProcess(): Promise<VulkanDeviceChoice> {
    const given = process.env[vulkanVisibleDevicesVariable];
    const choice = chooseVulkanVisibleDevices({
        environmentValue: given,
        // Only asked when the environment names none: a child process sees what ggml picks by itself.
        ggmlDefaultDevices: given != null && given !== "" ? null : await probeVulkanDevices()
    });
    if (choice.set != null)
        process.env[vulkanVisibleDevicesVariable] = choice.set;
    return choice;
}

function gpuUnavailable(setting: GpuSetting, why: string, cause?: unknown) {
    return new CleanroomError("GPU_UNAVAILABLE",
        `GPU "${setting}" was asked for, but ${why}. Use --gpu auto (the GPU where one is usable, else the CPU) or --gpu off.`,
        {gpu: setting}, {cause});
}

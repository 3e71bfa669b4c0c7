import * as z from "zod";

// In a file of their own, re-exported by schemas.ts: the CLI's --gpu and the engine read them, and a
// chat turn then need not build every schema of the API (#25 item 1).

/**
 * Where the model runs: `auto` offloads to a GPU wherever node-llama-cpp finds a usable one (Metal,
 * CUDA, Vulkan) and runs on the CPU where it finds none; a backend by name must be usable or the
 * core refuses to start on it; `off` is the CPU only. The app's setting and the `--gpu` flag.
 */
export const GpuSettingSchema = z.enum(["auto", "metal", "cuda", "vulkan", "off"]);
/** The GPU backend a model runs on, `null` on the CPU. */
export const GpuBackendSchema = z.enum(["metal", "cuda", "vulkan"]).nullable();

import os from "node:os";

let modelName: string | null | undefined;

/**
 * The first CPU's model name, `null` when the OS gives none. Read once per process: `os.cpus()`
 * parses /proc/cpuinfo and /proc/stat on Linux (a few milliseconds), and every cache key of a model
 * load (GPU probe, thread count, KV layout) names the CPU.
 */
export function cpuModelName(): string | null {
    if (modelName === undefined)
        modelName = os.cpus()[0]?.model ?? null;
    return modelName;
}

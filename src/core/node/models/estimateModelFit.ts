import os from "node:os";
import {GgufInsights, readGgufFileInfo, type Llama} from "node-llama-cpp";
import type {CatalogEntry, ModelFit} from "../../common/models.js";
import {llamaGpuChoice} from "../engine/loadLlama.js";

export type ModelFitOptions = {
    /** RAM in the machine. Defaults to `os.totalmem()`. */
    totalRamBytes?: number,
    /** RAM free right now. Defaults to `os.freemem()` (on Linux, MemAvailable). */
    freeRamBytes?: number,
    /** RAM kept for the OS and other apps. Defaults to a quarter of the RAM, at most `2 GiB`. */
    reservedRamBytes?: number,
    /** The smallest context worth having; a model fits only with at least this much. Defaults to `2048` (or the trained context when smaller). */
    minimumContextSize?: number,
    /** Free VRAM, when a GPU is in use. Defaults to the `Llama` instance's own reading; ignored without a GPU. */
    freeVramBytes?: number
};

export const defaultMinimumContextSize = 2048;
const contextStep = 256;

export function defaultReservedRamBytes(totalRamBytes: number) {
    return Math.min(2 * 1024 ** 3, Math.floor(totalRamBytes / 4));
}

type MemoryModel = {
    trainContextSize: number | null,
    /** Bytes the weights take in RAM (CPU) and, for a full offload, in VRAM. */
    modelRam: number,
    modelVram: number,
    /** Bytes a context of `n` tokens takes in RAM (CPU) and, for a full offload, in VRAM. */
    contextRam: (contextSize: number) => number,
    contextVram: (contextSize: number) => number
};

/**
 * Whether a local GGUF fits this machine, and the largest context that does, from
 * node-llama-cpp's estimates (`readGgufFileInfo`, `GgufInsights`): the weights fully in RAM
 * (no mmap paging) plus the KV cache and compute buffers of one sequence. With a GPU, the same
 * for a full offload against free VRAM.
 */
export async function estimateModelFit(llama: Llama, modelPath: string, options: ModelFitOptions = {}): Promise<ModelFit> {
    const fileInfo = await readGgufFileInfo(modelPath, {sourceType: "filesystem", logWarnings: false});
    const insights = await GgufInsights.from(fileInfo, llama);
    const gpuLayers = insights.totalLayers;
    const memory: MemoryModel = {
        trainContextSize: insights.trainContextSize ?? null,
        modelRam: insights.estimateModelResourceRequirements({gpuLayers: 0, useMmap: false}).cpuRam,
        modelVram: insights.estimateModelResourceRequirements({gpuLayers}).gpuVram,
        contextRam: (contextSize) => insights.estimateContextResourceRequirements({contextSize, modelGpuLayers: 0, sequences: 1}).cpuRam,
        contextVram: (contextSize) => insights.estimateContextResourceRequirements({contextSize, modelGpuLayers: gpuLayers, sequences: 1}).gpuVram
    };
    // A GPU binary that found no usable device (`auto` on a machine without a GPU) runs on the CPU: no VRAM verdict.
    const onGpu = (await llamaGpuChoice(llama)).backend != null;
    let freeVramBytes = options.freeVramBytes ?? null;
    if (onGpu && freeVramBytes == null)
        freeVramBytes = (await llama.getVramState()).free;

    return fitFromMemoryModel(memory, "gguf", onGpu ? freeVramBytes : null, options);
}

/**
 * The same verdict for a catalog model that is not on disk, from the catalog's numbers: the file
 * size for the weights, plus `overheadBytes`, plus `kvBytesPerToken` per token of context.
 * With a GPU (`freeVramBytes` given), a full offload is assumed to need the same amounts in VRAM.
 */
export function estimateCatalogFit(entry: CatalogEntry, options: ModelFitOptions = {}): ModelFit {
    const memory: MemoryModel = {
        trainContextSize: entry.trainContextSize,
        modelRam: entry.fileBytes + entry.memory.overheadBytes,
        modelVram: entry.fileBytes + entry.memory.overheadBytes,
        contextRam: (contextSize) => contextSize * entry.memory.kvBytesPerToken,
        contextVram: (contextSize) => contextSize * entry.memory.kvBytesPerToken
    };
    return fitFromMemoryModel(memory, "catalog", options.freeVramBytes ?? null, options);
}

function fitFromMemoryModel(memory: MemoryModel, basis: ModelFit["basis"], freeVramBytes: number | null, {
    totalRamBytes = os.totalmem(), freeRamBytes = os.freemem(), reservedRamBytes = defaultReservedRamBytes(totalRamBytes),
    minimumContextSize = defaultMinimumContextSize
}: ModelFitOptions): ModelFit {
    const maxContext = memory.trainContextSize ?? 4096;
    const minimum = Math.min(minimumContextSize, maxContext);
    const ramBudgetBytes = Math.max(0, totalRamBytes - reservedRamBytes);
    const ramNeededBytes = memory.modelRam + memory.contextRam(minimum);

    const ramMax = largestFittingContext(maxContext, (contextSize) => memory.modelRam + memory.contextRam(contextSize) <= ramBudgetBytes);
    let gpu: ModelFit["gpu"] = null;
    if (freeVramBytes != null) {
        const vramNeededBytes = memory.modelVram + memory.contextVram(minimum);
        gpu = {
            vramFreeBytes: freeVramBytes,
            fitsVram: vramNeededBytes <= freeVramBytes,
            maxContextSize: largestFittingContext(maxContext, (contextSize) => memory.modelVram + memory.contextVram(contextSize) <= freeVramBytes),
            vramNeededBytes
        };
    }
    return {
        basis,
        fitsRam: ramNeededBytes <= ramBudgetBytes,
        fitsFreeRamNow: ramNeededBytes <= freeRamBytes,
        maxContextSize: ramMax,
        trainContextSize: memory.trainContextSize,
        minimumContextSize: minimum,
        modelRamBytes: memory.modelRam,
        ramNeededBytes,
        ramBudgetBytes,
        freeRamBytes,
        gpu
    };
}

/** Largest multiple of 256 (or `limit` itself) up to `limit` for which `fits` holds; 0 when none. Assumes `fits` is monotonic. */
function largestFittingContext(limit: number, fits: (contextSize: number) => boolean): number {
    if (fits(limit))
        return limit;

    let low = 0; // in steps; 0 steps = no context
    let high = Math.floor(limit / contextStep);
    if (high * contextStep === limit)
        high--; // `limit` itself was just checked
    if (high <= 0 || !fits(contextStep))
        return 0;

    low = 1;
    while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if (fits(middle * contextStep))
            low = middle;
        else
            high = middle - 1;
    }
    return low * contextStep;
}

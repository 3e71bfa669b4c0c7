import os from "node:os";
import {GgufInsights, readGgufFileInfo, type Llama} from "node-llama-cpp";
import {ModelLoadError} from "../../common/errors.js";
import {checkGgufStructure} from "./checkGgufStructure.js";
import {checkModelFileHead} from "./checkModelFileHead.js";
import {checkModelHyperparameters} from "./checkModelHyperparameters.js";
import {formatBytes} from "../../common/formatBytes.js";

export type ModelFileFacts = {
    path: string,
    fileBytes: number,
    architecture: string,
    trainContextSize: number | null,
    layers: number,
    parameters: number,
    tensorBytes: number,
    /** RAM the weights need on the CPU, per node-llama-cpp's estimate. */
    estimatedRamBytes: number,
    insights: GgufInsights
};

export type ValidateModelOptions = {
    /** Memory the machine has. Defaults to `os.totalmem()`. */
    totalMemoryBytes?: number
};

/**
 * Checks a model file before it gets near llama.cpp, so that each bad input is a specific,
 * clear error instead of a crash: missing or unreadable (one answer for both), not GGUF,
 * truncated, an architecture llama.cpp does not know, or more memory than this machine has.
 * No error about a file that is not a valid model gives that file's size.
 */
export async function validateModelFile(llama: Llama, modelPath: string, options: ValidateModelOptions = {}): Promise<ModelFileFacts> {
    try {
        return await checkModelFile(llama, modelPath, options);
    } catch (error) {
        if (error instanceof ModelLoadError)
            throw error;
        // node-llama-cpp's insights can throw on values its tables do not know (a removed ggml type, for one).
        throw new ModelLoadError(
            "MODEL_NOT_GGUF",
            `The GGUF header could not be interpreted: ${error instanceof Error ? error.message : String(error)}`,
            {path: modelPath}, error
        );
    }
}

async function checkModelFile(llama: Llama, modelPath: string, {totalMemoryBytes = os.totalmem()}: ValidateModelOptions): Promise<ModelFileFacts> {
    const stat = checkModelFileHead(modelPath);
    // From here on, no message or detail gives the size of a file that is not a valid model.
    // Every count, length and type of the header is bounded before node-llama-cpp's reader trusts them.
    checkGgufStructure(modelPath, stat.size);

    let fileInfo: Awaited<ReturnType<typeof readGgufFileInfo>>;
    try {
        fileInfo = await readGgufFileInfo(modelPath, {sourceType: "filesystem", logWarnings: false, spliceSplitFiles: false});
    } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const truncated = /out of range|end of|offset|RangeError|beyond/i.test(reason) || error instanceof RangeError;
        throw new ModelLoadError(
            truncated ? "MODEL_TRUNCATED" : "MODEL_NOT_GGUF",
            truncated
                ? "The model file ends inside its own header: it is truncated or damaged."
                : `The GGUF header could not be read: ${reason}`,
            {path: modelPath},
            error
        );
    }

    // node-llama-cpp's reader returns what it could parse of a cut header instead of failing.
    const declaredTensors = Number(fileInfo.tensorCount);
    const parsedTensors = (fileInfo.tensorInfo ?? []).length;
    if (Number(fileInfo.infoEndOffset) > stat.size || parsedTensors < declaredTensors)
        throw new ModelLoadError(
            "MODEL_TRUNCATED",
            `The model file is truncated inside its header: it declares ${declaredTensors} tensors, ${parsedTensors} could be read.`,
            {path: modelPath, declaredTensors, parsedTensors}
        );

    const architecture = String(fileInfo.metadata?.general?.architecture ?? "");
    const insights = await GgufInsights.from(fileInfo, llama);
    if (architecture === "" || !insights.isSupportedByLlamaCpp)
        throw new ModelLoadError(
            "MODEL_UNSUPPORTED_ARCHITECTURE",
            `Unsupported model architecture "${architecture || "(none)"}": this build of llama.cpp cannot run it.`,
            {path: modelPath, architecture}
        );
    checkModelHyperparameters(fileInfo, architecture, modelPath);

    const tensors = fileInfo.fullTensorInfo ?? fileInfo.tensorInfo ?? [];
    const dataStart = tensors.reduce((min, tensor) => Math.min(min, Number(tensor.fileOffset)), Number.POSITIVE_INFINITY);
    const tensorBytes = insights.modelSize;
    const lastTensorStart = tensors.reduce((max, tensor) => Math.max(max, Number(tensor.fileOffset)), 0);

    const estimatedRamBytes = insights.estimateModelResourceRequirements({gpuLayers: 0, useMmap: false}).cpuRam;
    checkModelFitsMemory(modelPath, estimatedRamBytes, totalMemoryBytes);

    const neededBytes = Number.isFinite(dataStart) ? dataStart + tensorBytes : tensorBytes;
    if (tensors.length === 0 || lastTensorStart >= stat.size || (Number.isFinite(dataStart) && dataStart + tensorBytes > stat.size))
        throw new ModelLoadError(
            "MODEL_TRUNCATED",
            `The model file is truncated: its header says it holds ${formatBytes(neededBytes)} (${neededBytes} bytes), and the file is shorter.`,
            {path: modelPath, expectedBytes: neededBytes}
        );

    return {
        path: modelPath,
        fileBytes: stat.size,
        architecture,
        trainContextSize: insights.trainContextSize ?? null,
        layers: insights.totalLayers,
        parameters: insights.totalParameters,
        tensorBytes,
        estimatedRamBytes,
        insights
    };
}

/** MODEL_TOO_LARGE_FOR_MEMORY when the weights need more RAM than the machine has. */
export function checkModelFitsMemory(modelPath: string, estimatedRamBytes: number, totalMemoryBytes: number) {
    if (estimatedRamBytes > totalMemoryBytes)
        throw new ModelLoadError(
            "MODEL_TOO_LARGE_FOR_MEMORY",
            `The model needs about ${formatBytes(estimatedRamBytes)} of memory; this machine has ${formatBytes(totalMemoryBytes)}.`,
            {path: modelPath, neededBytes: estimatedRamBytes, totalMemoryBytes}
        );
}

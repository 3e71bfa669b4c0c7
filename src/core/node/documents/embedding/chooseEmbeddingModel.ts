import fs from "node:fs";
import path from "node:path";
import {ModelLoadError} from "../../../common/errors.js";
import {settingKeys} from "../../settings/settingKeys.js";
import type {SettingsStore} from "../../settings/SettingsStore.js";

const ggufMagic = "GGUF";

/**
 * Chooses the embedding model for documents (its absolute path), or none (`null`: retrieval by
 * BM25 alone). The file must be a readable GGUF file now (`MODEL_NOT_FOUND`, `MODEL_NOT_GGUF`);
 * whether llama.cpp can embed with it is seen when a turn first loads it.
 */
export function chooseEmbeddingModel(settings: SettingsStore, modelPath: string | null): string | null {
    if (modelPath == null) {
        settings.delete(settingKeys.documents.embeddingModelPath);
        return null;
    }
    const absolute = checkEmbeddingModelFile(modelPath);
    settings.set(settingKeys.documents.embeddingModelPath, absolute);
    return absolute;
}

/** The absolute path of `modelPath` if it is a readable GGUF file (`MODEL_NOT_FOUND`, `MODEL_NOT_GGUF` otherwise). */
export function checkEmbeddingModelFile(modelPath: string): string {
    const absolute = path.resolve(modelPath);
    let head: Buffer;
    try {
        const fd = fs.openSync(absolute, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
        try {
            if (!fs.fstatSync(fd).isFile())
                throw new Error("not a file");
            head = Buffer.alloc(4);
            fs.readSync(fd, head, 0, 4, 0);
        } finally {
            fs.closeSync(fd);
        }
    } catch {
        throw new ModelLoadError("MODEL_NOT_FOUND", `No model file at ${absolute}: not found or not readable.`, {path: absolute});
    }
    if (head.toString("latin1") !== ggufMagic)
        throw new ModelLoadError("MODEL_NOT_GGUF", `${absolute} is not a GGUF file (it does not begin with "GGUF"): an embedding model must be a GGUF file.`, {path: absolute});
    return absolute;
}

/** The chosen embedding model's path, or null. */
export function chosenEmbeddingModel(settings: SettingsStore): string | null {
    return settings.get<string>(settingKeys.documents.embeddingModelPath) ?? null;
}

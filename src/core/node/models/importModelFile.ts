import path from "node:path";
import type {Llama} from "node-llama-cpp";
import type {ModelOrigin, RegisteredModel} from "../../common/models.js";
import {validateModelFile} from "../engine/validateModelFile.js";
import type {ModelRegistry} from "./ModelRegistry.js";

export type ImportModelFileOptions = {
    /** Defaults to `"import"`. */
    origin?: ModelOrigin,
    /** Defaults to the file name without `.gguf`. */
    name?: string,
    catalogId?: string | null,
    sha256?: string | null,
    sourceRef?: string | null,
    /** Passed to `validateModelFile`. Defaults to `os.totalmem()`. */
    totalMemoryBytes?: number
};

/**
 * Validates a GGUF anywhere on disk (`validateModelFile`: present, GGUF, complete, an
 * architecture this llama.cpp runs, not larger than the machine's memory) and registers it to
 * be used in place. Nothing is copied.
 */
export async function importModelFile(llama: Llama, registry: ModelRegistry, filePath: string, {
    origin = "import", name, catalogId = null, sha256 = null, sourceRef = null, totalMemoryBytes
}: ImportModelFileOptions = {}): Promise<RegisteredModel> {
    const absolutePath = path.resolve(filePath);
    const facts = await validateModelFile(llama, absolutePath, totalMemoryBytes != null ? {totalMemoryBytes} : {});
    return registry.add({
        name: name ?? path.basename(absolutePath).replace(/\.gguf$/i, ""),
        path: absolutePath,
        origin,
        fileBytes: facts.fileBytes,
        sha256,
        catalogId,
        sourceRef,
        architecture: facts.architecture
    });
}

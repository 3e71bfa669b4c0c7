import * as z from "zod";

/** Lower-case hex SHA-256 of a whole file. */
export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits");

export const CatalogIdSchema = z.string().min(1).max(128).regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits and . _ - only");

/** Memory a catalog model needs, from its architecture; used when no local file can be read. */
export const CatalogMemorySchema = z.object({
    /** K and V cache bytes per token of context (F16, all layers): 2 x layers x KV heads x head size x 2 bytes. */
    kvBytesPerToken: z.number().int().positive(),
    /** Compute buffers, logits and runtime on top of the weights and the KV cache (rough estimate). */
    overheadBytes: z.number().int().nonnegative(),
    /** The context size `ramBytes` is given for. */
    ramContextSize: z.number().int().positive(),
    /** Weights (the file) + overhead + KV cache at `ramContextSize`. */
    ramBytes: z.number().int().positive(),
    note: z.string().optional()
});

export const CatalogEntrySchema = z.object({
    id: CatalogIdSchema,
    /** `embedding`: a model that turns document chunks into vectors for retrieval (#23), never a chat model. Defaults to `chat`. */
    purpose: z.enum(["chat", "embedding"]).default("chat"),
    name: z.string().min(1),
    family: z.string().min(1),
    parameters: z.string().min(1),
    quantization: z.string().min(1),
    architecture: z.string().min(1),
    fileName: z.string().regex(/^[^/\\]+\.gguf$/i, "a bare .gguf file name"),
    /** `https://` URL or node-llama-cpp `hf:` URI. */
    url: z.string().regex(/^(https?:\/\/|hf:)/, "https:// URL or hf: URI"),
    /** Page where the file and its checksum are published. */
    sourcePage: z.string().url(),
    /** Exact size in bytes; a download of any other size is refused. */
    fileBytes: z.number().int().positive(),
    /** Expected SHA-256, or null where no published value is known (then only the size is checked). */
    sha256: Sha256Schema.nullable(),
    /** Where `sha256` comes from, or why it is null. */
    sha256Source: z.string().min(1),
    license: z.string().min(1),
    licenseUrl: z.string().url(),
    trainContextSize: z.number().int().positive(),
    memory: CatalogMemorySchema,
    summary: z.string().min(1)
});
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

export const ModelCatalogSchema = z.object({
    version: z.literal(1),
    entries: z.array(CatalogEntrySchema).min(1)
});
export type ModelCatalogFile = z.infer<typeof ModelCatalogSchema>;

/** Where a registered model came from. Only downloads are stored in the models folder; the rest are used in place. */
export const ModelOriginSchema = z.enum(["download", "import", "lmstudio", "ollama", "jan", "gpt4all"]);
export type ModelOrigin = z.infer<typeof ModelOriginSchema>;

export const RegisteredModelIdSchema = z.string().min(1).max(128).regex(/^[a-z0-9][a-z0-9._:-]*$/, "lower-case letters, digits and . _ : - only");

export const RegisteredModelSchema = z.object({
    id: RegisteredModelIdSchema,
    name: z.string().min(1),
    /** Absolute path of the GGUF file, used in place. */
    path: z.string().min(1),
    origin: ModelOriginSchema,
    fileBytes: z.number().int().nonnegative(),
    /** Checked SHA-256 (downloads), else null: imported files are not hashed. */
    sha256: Sha256Schema.nullable(),
    catalogId: CatalogIdSchema.nullable(),
    /** Download URL, or the other app's name for the model (for example an Ollama tag). */
    sourceRef: z.string().nullable(),
    architecture: z.string().nullable(),
    addedAt: z.number().int().nonnegative()
});
export type RegisteredModel = z.infer<typeof RegisteredModelSchema>;

/**
 * A registered model whose file is not where it was registered, and what puts it right, in order:
 * `mount` (its folder is gone too: connect the drive), `locate` (register the file from where it
 * is now), `download` (a downloaded model: download it again), `remove` (forget it).
 */
export const MissingModelFileSchema = z.object({
    /** `file-gone`: its folder is there, the file is not (deleted or moved); `folder-gone`: the folder is not there either. */
    reason: z.enum(["file-gone", "folder-gone"]),
    /** The topmost folder of the path that is not there (a drive's mount point, a renamed folder); null for `file-gone`. */
    missingFolder: z.string().nullable(),
    remedies: z.array(z.enum(["mount", "locate", "download", "remove"]))
});
export type MissingModelFile = z.infer<typeof MissingModelFileSchema>;

export const ModelRegistryFileSchema = z.object({
    version: z.literal(1),
    /** Id of the model that `chat` and the app use. */
    defaultModel: RegisteredModelIdSchema.nullable(),
    models: z.array(RegisteredModelSchema)
});
export type ModelRegistryFile = z.infer<typeof ModelRegistryFileSchema>;

export const DetectedAppSchema = z.enum(["lmstudio", "ollama", "jan", "gpt4all"]);
export type DetectedApp = z.infer<typeof DetectedAppSchema>;

export const DetectedModelSchema = z.object({
    app: DetectedAppSchema,
    /** Absolute path of the GGUF file (for Ollama, the blob). */
    path: z.string(),
    /** The app's name for it: file name, or `model:tag` for Ollama. */
    names: z.array(z.string()).min(1),
    fileBytes: z.number().int().nonnegative()
});
export type DetectedModel = z.infer<typeof DetectedModelSchema>;

export const DetectionSkipSchema = z.object({
    app: DetectedAppSchema,
    path: z.string(),
    reason: z.string()
});
export type DetectionSkip = z.infer<typeof DetectionSkipSchema>;

export const DetectionResultSchema = z.object({
    models: z.array(DetectedModelSchema),
    skipped: z.array(DetectionSkipSchema),
    searched: z.array(z.object({app: DetectedAppSchema, dir: z.string(), exists: z.boolean()}))
});
export type DetectionResult = z.infer<typeof DetectionResultSchema>;

export const ModelFitSchema = z.object({
    /** `gguf`: estimated by node-llama-cpp from the file's header; `catalog`: from the catalog's numbers. */
    basis: z.enum(["gguf", "catalog"]),
    /** The model with at least `minimumContextSize` of context fits the RAM budget. */
    fitsRam: z.boolean(),
    /** The same check against the memory free right now. */
    fitsFreeRamNow: z.boolean(),
    /** Largest context (a multiple of 256, at most the trained context) that fits the RAM budget; 0 when none does. */
    maxContextSize: z.number().int().nonnegative(),
    trainContextSize: z.number().int().positive().nullable(),
    minimumContextSize: z.number().int().positive(),
    modelRamBytes: z.number().nonnegative(),
    /** Model plus a context of `minimumContextSize`. */
    ramNeededBytes: z.number().nonnegative(),
    ramBudgetBytes: z.number().nonnegative(),
    freeRamBytes: z.number().nonnegative(),
    /** Null when there is no GPU in use. */
    gpu: z.object({
        vramFreeBytes: z.number().nonnegative(),
        fitsVram: z.boolean(),
        maxContextSize: z.number().int().nonnegative(),
        vramNeededBytes: z.number().nonnegative()
    }).nullable()
});
export type ModelFit = z.infer<typeof ModelFitSchema>;

export const DownloadProgressSchema = z.object({
    phase: z.enum(["downloading", "verifying"]),
    downloadedBytes: z.number().nonnegative(),
    totalBytes: z.number().nonnegative(),
    /** Average over the transfer so far, in bytes per second. */
    bytesPerSecond: z.number().nonnegative(),
    /** Null when unknown. */
    etaSeconds: z.number().nonnegative().nullable()
});
export type DownloadProgress = z.infer<typeof DownloadProgressSchema>;

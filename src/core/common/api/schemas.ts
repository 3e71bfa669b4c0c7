import * as z from "zod";
import {cloudEndpointProblem} from "../cloud/cloudEndpointProblem.js";
import {
    CatalogEntrySchema, CatalogIdSchema, DetectedModelSchema, DetectionResultSchema, MissingModelFileSchema, ModelFitSchema, RegisteredModelIdSchema, RegisteredModelSchema
} from "../models.js";
import {
    ConversationIdSchema, ConversationPolicySchema, ConversationSettingsSchema, MessageRoleSchema, MessageStatusSchema,
    RouteSchema
} from "../types.js";
import {SecretFindingSchema} from "../secretScan/types.js";
import {ContextSizeSchema, LockAfterMinutesSchema, NeverSendListSchema, ResumeSnapshotMaxMiBSchema, ThreadsSchema} from "./limits.js";
import {AuditEventSchema} from "./auditEvents.js";
import {GpuBackendSchema, GpuSettingSchema} from "./gpuSchemas.js";
import {CloudVerdictSchema, DroppedHistorySchema, ModelNeededForSchema, ScrubReportSchema, WireErrorSchema} from "./recordedSchemas.js";
import {CitationSchema, IsolationDocumentSchema} from "./documentSchemas.js";

export {AuditEventSchema, CloudVerdictSchema, DroppedHistorySchema, ModelNeededForSchema, ScrubReportSchema, WireErrorSchema};

/**
 * Shapes of the values that cross the API: what calls return and what events carry.
 * Inputs are validated at the core's door; outputs are typed by these schemas.
 */

export const ConversationSchema = z.object({
    id: ConversationIdSchema,
    title: z.string(),
    policy: ConversationPolicySchema,
    /** Pinned conversations head the list. */
    pinned: z.boolean(),
    settings: ConversationSettingsSchema,
    createdAt: z.number(),
    updatedAt: z.number(),
    /** Held in memory only, never written to disk; gone when the core closes (quit, lock). */
    incognito: z.boolean()
});

/** A conversation in the list: how many messages it shows, and whether its composer holds an unsent draft. */
export const ConversationSummarySchema = ConversationSchema.extend({messageCount: z.number().int(), hasDraft: z.boolean()});

/** A conversation found by `conversations.search`: by its title, or by the text of its messages (full-text, FTS5). */
export const SearchHitSchema = z.object({
    conversation: ConversationSummarySchema,
    /** Where the text was found: `title`, or `message` (then `messageId` and a `snippet` with the match between [ and ]). */
    matchedIn: z.enum(["title", "message"]),
    messageId: z.number().int().nullable(),
    snippet: z.string().nullable()
});

/** A document attached to a user message (#23): what it is and how a turn gave it to the model; never its text. */
export const MessageAttachmentSchema = z.object({
    id: z.number().int(),
    name: z.string(),
    format: z.enum(["text", "markdown", "code", "pdf", "docx", "html"]),
    /** Size of the original file. */
    bytes: z.number().int(),
    pages: z.number().int(),
    /** The document's size in the model's tokens. */
    tokens: z.number().int(),
    /** `whole`: its text went in beside the history; `retrieved`: too large, it is chunked and its best chunks go in each turn. */
    mode: z.enum(["whole", "retrieved"])
});

/** A document as a turn gave it to the model: each passage sent (a whole page, or a retrieved chunk) with its page and length. */
export const TurnAttachmentSchema = z.object({
    name: z.string(),
    bytes: z.number().int(),
    pages: z.number().int(),
    tokens: z.number().int(),
    mode: z.enum(["whole", "retrieved"]),
    passages: z.array(z.object({page: z.number().int(), chars: z.number().int()}))
});

export const MessageSchema = z.object({
    id: z.number().int(),
    conversationId: ConversationIdSchema,
    role: MessageRoleSchema,
    content: z.string(),
    status: MessageStatusSchema,
    route: RouteSchema.nullable(),
    routeReason: z.string().nullable(),
    tokens: z.number().int().nullable(),
    /** A local reply's generation speed, once it finished; null otherwise. */
    tokensPerSecond: z.number().nullable().optional(),
    /**
     * Which version of the message this is, when an edit and resend kept older ones (null otherwise):
     * `index` of `count`, oldest first, and the ids of the neighbouring versions (for `chat.showVersion`).
     */
    branch: z.object({
        index: z.number().int(), count: z.number().int(), previousId: z.number().int().nullable(), nextId: z.number().int().nullable()
    }).nullable().optional(),
    /** Set on cloud replies that were blocked or flagged. */
    verdict: CloudVerdictSchema.nullable().optional(),
    /** The documents a user message brought (absent when none). */
    attachments: z.array(MessageAttachmentSchema).optional(),
    /** What a reply was given of the conversation's documents: retrieved passages and documents given whole (absent when none). */
    citations: z.array(CitationSchema).optional(),
    createdAt: z.number(),
    updatedAt: z.number()
});

/** One turn of a conversation: where it went and which context served it. */
export const TurnRouteSchema = z.object({
    /** The turn's reply (its assistant message); null only for turns recorded before the audit log carried it. */
    messageId: z.number().int().nullable(),
    route: RouteSchema,
    contextId: z.string().nullable(),
    at: z.number()
});

/** Shared-cloud canary counters; all zero until cloud turns exist. */
export const CanaryCountsSchema = z.object({
    planted: z.number().int(),
    checksPassed: z.number().int(),
    repliesBlocked: z.number().int(),
    /** Delivered, with a warning (e.g. the server counted far fewer prompt tokens than were sent). */
    repliesFlagged: z.number().int()
});

export const IsolationReportSchema = z.object({
    conversationId: ConversationIdSchema,
    live: z.object({
        contextId: z.string(),
        kvCells: z.number().int(),
        kvBytes: z.number(),
        tokensInContext: z.number().int(),
        threads: z.number().int()
    }).nullable(),
    lastScrub: ScrubReportSchema.extend({at: z.number()}).nullable(),
    scrubs: z.object({verified: z.number().int(), failed: z.number().int()}),
    refusals: z.number().int(),
    routes: z.object({local: z.number().int(), cloud: z.number().int()}),
    turns: z.array(TurnRouteSchema),
    canaries: CanaryCountsSchema,
    /** The conversation's documents and what of them was sent where (#23 item 7). */
    documents: z.array(IsolationDocumentSchema),
    events: z.array(AuditEventSchema)
});

export const ThreadsSettingSchema = ThreadsSchema.nullable();
export {GpuSettingSchema, GpuBackendSchema};
/**
 * Whether a scrub's read-back reads the KV state from the device that holds it: `verified` when the
 * engine saw the read-back return what the device computed (a token evaluated on it); `unverified`
 * when it could not (every scrub on it is then reported unverified); `host` when the KV is in RAM.
 */
export const KvReadBackSchema = z.enum(["host", "verified", "unverified"]);
export const ContextSizeSettingSchema = ContextSizeSchema.nullable();
/** An OpenAI-compatible base URL: https://, or http:// to this machine only (`cloudEndpointProblem`). */
export const CloudEndpointSchema = z.url({protocol: /^https?$/}).max(2048).superRefine((endpoint, context) => {
    const problem = URL.canParse(endpoint) ? cloudEndpointProblem(endpoint) : null;
    if (problem != null)
        context.addIssue({code: "custom", message: problem});
}).nullable();

/** App-wide settings. `null` means "the core decides" (threads: measured; context size: the model's, at most 4096). */
export const AppSettingsSchema = z.object({
    modelPath: z.string().min(1).max(4096).nullable(),
    threads: ThreadsSettingSchema,
    contextSize: ContextSizeSettingSchema,
    /** Defaults to `auto`; applies when the core next starts. */
    gpu: GpuSettingSchema,
    /** Minutes of idleness before the app locks, with a passphrase (0 never). */
    lockAfterMinutes: LockAfterMinutesSchema,
    /** Whether a conversation's KV state is saved (sealed) when its context ends, to resume it at once (default on). */
    resumeSnapshots: z.boolean(),
    /** The largest such state saved, in MiB; a larger one is not saved (the next turn evaluates the history again). */
    resumeSnapshotMaxMiB: ResumeSnapshotMaxMiBSchema,
    /** The embedding model chosen for documents (#23), a GGUF path: passages are found by words and by meaning. Null: by words alone (BM25). */
    embeddingModelPath: z.string().min(1).max(4096).nullable(),
    cloud: z.object({
        endpoint: CloudEndpointSchema,
        model: z.string().min(1).max(256).nullable(),
        fallback: z.boolean(),
        /** "Never send these": words and phrases a cloud request must not carry (it is stopped, or sends them redacted). */
        neverSend: NeverSendListSchema,
        /** The key itself never leaves the vault; only whether one is stored for this endpoint's origin. */
        apiKeyStored: z.boolean(),
        /**
         * Set when a key is stored but was given for another endpoint (origin) than the one set
         * now: it is not sent there, and must be entered again. Says so, for the user; else null.
         */
        apiKeyReentry: z.string().nullable(),
        /** Where the key is kept, e.g. "os-keychain", "basic_text" (weak), "memory" (this session only). */
        keyStorage: z.string(),
        keyStorageWarning: z.string().nullable()
    })
});

/** The loaded model and how the engine runs it. */
export const ModelInfoSchema = z.object({
    path: z.string(),
    architecture: z.string(),
    fileBytes: z.number(),
    parameters: z.number(),
    /** The context the model was trained with, when its file says. */
    trainContextSize: z.number().int().nullable(),
    contextSize: z.number().int(),
    /** The context size asked for (the setting or `--context-size`); null when none was (the core's default). */
    requestedContextSize: z.number().int().nullable(),
    /** Set when the size asked for is above the model's trained context and was capped to it: both numbers, in words. */
    contextSizeNotice: z.string().nullable(),
    threads: z.number().int(),
    threadsSource: z.enum(["override", "tuned", "cached"]),
    /** Generation speed at each thread count tried (empty when the count was given). */
    threadMeasurements: z.array(z.object({
        threads: z.number().int(),
        tokensPerSecond: z.number(),
        tokens: z.number().int(),
        stopped: z.enum(["tokens", "time", "slower"]).optional()
    })),
    /** The llama.cpp binary in use, e.g. `prebuilt v0.4.0 cpu` (see `describeLlamaBuild`). */
    llamaBuild: z.string(),
    /** libuv's thread pool in the core's process (1 where the core's entry set it up, see coreProcessEnv). */
    uvThreadpoolSize: z.number().int(),
    kvBytesPerContext: z.number(),
    poolBudgetBytes: z.number(),
    poolCapacity: z.number().int(),
    /** What was asked for (the setting or `--gpu`). */
    gpuRequested: GpuSettingSchema,
    /** The backend the model's offloaded layers run on; `null`: the CPU (nothing offloaded). */
    gpu: GpuBackendSchema,
    /** The GPU device's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`; `null` on the CPU. */
    gpuDevice: z.string().nullable(),
    /** Layers offloaded to the GPU, as node-llama-cpp's fit estimate chose them (VRAM for the model and one context). */
    gpuLayers: z.number().int(),
    /** The model's layers (blocks), so `gpuLayers` reads as "6 of 6". */
    modelLayers: z.number().int(),
    /** Whether the scrub's read-back is proved to read the KV from the device that holds it (see `KvReadBackSchema`). */
    kvReadBack: KvReadBackSchema,
    /** Why `kvReadBack` is `unverified`; else `null`. */
    kvReadBackProblem: z.string().nullable(),
    /**
     * Where llama.cpp keeps a conversation's state for this model: one KV cache (`kv`), two (`swa`:
     * sliding-window attention), a KV cache and a recurrent state (`hybrid`), a recurrent state (`recurrent`),
     * nothing (`none`: an encoder such as BERT, whose contexts keep no KV memory).
     */
    sequenceMemory: z.enum(["kv", "swa", "hybrid", "recurrent", "none"]),
    /** Whether a scrub zeroes and reads back all of that state; when not, no scrub of the model is verified. */
    stateCovered: z.boolean(),
    /** Why `stateCovered` is false; else `null`. */
    stateCoverageProblem: z.string().nullable(),
    /**
     * The GPU device's isolation probe (a canary in one sequence must leave another sequence's
     * logits bit-identical to a fresh context's), run at the first load of a model architecture on a
     * device, driver and llama.cpp build, then cached. `null` when no GPU was to be used (CPU loads
     * never run it). `passed: false`: the device was not used, the model runs on the CPU.
     */
    deviceCheck: z.object({
        device: z.string(),
        passed: z.boolean(),
        /** Why it failed; else `null`. */
        problem: z.string().nullable(),
        /** `probed` on this load, or `cached` from an earlier one. */
        source: z.enum(["probed", "cached"]),
        /** What the probe cost when it ran, in milliseconds. */
        durationMs: z.number()
    }).nullable()
});

/**
 * What a model load is doing: reading the file, loading it into memory, checking the GPU device keeps
 * requests apart (first load on a device only), measuring the fastest thread count (first load on
 * this machine only), learning the KV layout the scrub uses.
 */
export const ModelLoadStepSchema = z.enum(["reading", "loading", "deviceCheck", "threads", "kvLayout"]);

export const ModelStatusSchema = z.object({
    state: z.enum(["none", "loading", "ready", "error"]),
    /** While `loading`: the step running now. */
    step: ModelLoadStepSchema.nullable().optional(),
    /** The model being loaded, loaded, or that failed. */
    path: z.string().nullable(),
    info: ModelInfoSchema.nullable(),
    error: WireErrorSchema.nullable()
});

/**
 * Whether the app is locked, as `app.lockState` answers and the `app.lockChanged` event pushes it.
 * `unlockRetryAfterMs`, present only while locked after wrong passphrases, is how long `app.unlock`
 * still refuses (UNLOCK_BACKOFF).
 */
export const AppLockStateSchema = z.object({locked: z.boolean(), passphraseSet: z.boolean(), idleLockMs: z.number().int().nullable(),
    unlockRetryAfterMs: z.number().int().positive().optional()});
export type AppLockState = z.infer<typeof AppLockStateSchema>;

export const CoreStatusSchema = z.object({
    /** `disconnected` and `restarted` are emitted by the transport side, never by the core itself. */
    state: z.enum(["ready", "disconnected", "restarted"]),
    model: ModelStatusSchema.nullable(),
    /** Settings that only apply when the core next starts and differ from the running ones. */
    pendingRestart: z.array(z.string()),
    message: z.string().nullable()
});

export const TurnTokensSchema = z.object({
    prompt: z.number().int(),
    evaluated: z.number().int(),
    reused: z.number().int(),
    generated: z.number().int()
});

/** The local context that served a turn. */
export const IsolationInfoSchema = z.object({contextId: z.string(), kvCells: z.number().int(), kvBytes: z.number(), threads: z.number().int()});

const TurnResultBaseSchema = z.object({
    conversationId: ConversationIdSchema,
    routeReason: z.string(),
    userMessageId: z.number().int(),
    assistantMessageId: z.number().int(),
    status: MessageStatusSchema
});

/** A turn the local engine served, as `turn.finished` carries it. */
export const LocalTurnViewSchema = TurnResultBaseSchema.extend({
    route: z.literal("local"),
    tokens: TurnTokensSchema,
    finishReason: z.enum(["stop", "maxTokens", "aborted"]),
    history: DroppedHistorySchema,
    isolation: IsolationInfoSchema,
    timings: z.object({firstTokenMs: z.number().nullable(), totalMs: z.number(), tokensPerSecond: z.number().nullable()}),
    /**
     * Documents (#23): those this turn brought, each with what of it was sent, and the retrieved passages of the
     * conversation's earlier documents, labelled (document, page). Absent when the conversation has none.
     */
    attachments: z.array(TurnAttachmentSchema).optional(),
    retrieved: z.array(z.object({name: z.string(), page: z.number().int(), startLine: z.number().int(), endLine: z.number().int(), chars: z.number().int()})).optional()
});

/** What the shared cloud did with a turn, canary-checked. */
export const CloudTurnInfoSchema = z.object({
    requestId: z.string(),
    blocked: z.boolean(),
    verdict: CloudVerdictSchema.nullable(),
    warnings: z.array(z.string()),
    canariesPlanted: z.number().int(),
    /** Ours, as the endpoint's tokenizer counts them (`countedBy: "endpoint"`) or as we estimate; what the server reported. */
    promptTokens: z.object({ours: z.number().int(), reported: z.number().int().nullable(), countedBy: z.enum(["endpoint", "estimate"])}),
    model: z.string().nullable(),
    /** Why the server stopped ("stop", "length", …), as it said; null when it did not. */
    finishReason: z.string().nullable(),
    /** Secrets found in what the turn would send: sent as placeholders (`redacted`) or as they were (`allowed`, kinds the turn let through). */
    secrets: z.object({redacted: z.array(SecretFindingSchema), allowed: z.array(SecretFindingSchema)})
});

/** A turn the shared cloud served, as `turn.finished` carries it: a summary; the findings' details stay in the audit log. */
export const CloudTurnViewSchema = TurnResultBaseSchema.extend({
    route: z.literal("cloud"),
    /** Prompt tokens as the core counts them (`cloud.promptTokens`); generated: as the server reported, null when it did not. */
    tokens: z.object({prompt: z.number().int(), generated: z.number().int().nullable()}),
    timings: z.object({firstTokenMs: z.number().nullable(), totalMs: z.number()}),
    cloud: CloudTurnInfoSchema.pick({blocked: true, canariesPlanted: true, warnings: true, verdict: true, finishReason: true})
});

/** How a turn ended, local or cloud (told apart by `route`). */
export const TurnResultSchema = z.discriminatedUnion("route", [LocalTurnViewSchema, CloudTurnViewSchema]);

export const TurnStartedSchema = z.object({
    conversationId: ConversationIdSchema,
    userMessageId: z.number().int(),
    assistantMessageId: z.number().int()
});

/** A download started by `models.download`; events and `models.cancelDownload` name it. */
export const DownloadIdSchema = z.string().length(19).regex(/^dl-[0-9a-f]{16}$/, "a download id (dl- and 16 hex digits)");

export const DownloadStateSchema = z.enum(["running", "verifying", "done", "failed", "cancelled"]);

/** One step of a download: `running` (bytes arriving), `verifying` (size, GGUF header, SHA-256), then `done`, `failed` or `cancelled`. */
export const DownloadProgressEventSchema = z.object({
    id: DownloadIdSchema,
    catalogId: CatalogIdSchema.nullable(),
    fileName: z.string(),
    /** Bytes received (while running) or hashed (while verifying). */
    bytes: z.number().nonnegative(),
    /** Size of the file; 0 while unknown. */
    total: z.number().nonnegative(),
    bytesPerSecond: z.number().nonnegative(),
    state: DownloadStateSchema,
    /** Why it failed or was cancelled; null otherwise. */
    error: WireErrorSchema.nullable(),
    /** The registered model, once `done`. */
    modelId: RegisteredModelIdSchema.nullable()
});

/** A registered model as the app shows it: whether it is the default, loaded, still on disk, and whether it fits this machine. */
export const InstalledModelSchema = RegisteredModelSchema.extend({
    isDefault: z.boolean(),
    isLoaded: z.boolean(),
    present: z.boolean(),
    /** Null when the file is there; else why it is not, and the remedies (`problem` says it in words). */
    missing: MissingModelFileSchema.nullable(),
    /** Null when the file is missing or cannot be read; `problem` says why. */
    fit: ModelFitSchema.nullable(),
    problem: z.string().nullable()
});

/** A recommended model: its catalog entry, the registered model when it is downloaded, and whether it fits this machine. */
export const CatalogModelSchema = CatalogEntrySchema.extend({
    installedAs: RegisteredModelIdSchema.nullable(),
    fit: ModelFitSchema
});

export const ModelLibrarySchema = z.object({
    /** Where downloads go and `registry.json` lives. */
    modelsDir: z.string(),
    defaultModelId: RegisteredModelIdSchema.nullable(),
    installed: z.array(InstalledModelSchema),
    catalog: z.array(CatalogModelSchema),
    /** Downloads still running or verifying (their latest progress). */
    downloads: z.array(DownloadProgressEventSchema)
});

export const DetectedModelsSchema = DetectionResultSchema.extend({
    models: z.array(DetectedModelSchema.extend({registeredAs: RegisteredModelIdSchema.nullable()})),
    /** Registered by this call (`add`). */
    added: z.array(RegisteredModelSchema),
    /** Asked to be added but refused (not found by detection, or not a usable model). */
    rejected: z.array(z.object({path: z.string(), error: WireErrorSchema}))
});

/** A conversation whose title or shown messages contain the searched text; `snippet`: the matched message text around the match. */
/** One message as exported (and imported back): the shown branch only. */
/** A document of an exported message (#23), with its text page by page. */
export const ExportedAttachmentSchema = z.object({
    name: z.string().min(1).max(1000),
    format: MessageAttachmentSchema.shape.format,
    bytes: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
    mode: MessageAttachmentSchema.shape.mode,
    pages: z.array(z.string().max(10_000_000)).min(1).max(100_000)
});

export const ExportedMessageSchema = z.object({
    role: MessageRoleSchema,
    content: z.string().max(1_000_000),
    status: MessageStatusSchema,
    route: RouteSchema.nullable().optional(),
    tokens: z.number().int().nullable().optional(),
    attachments: z.array(ExportedAttachmentSchema).max(100).optional(),
    createdAt: z.number()
});

/** One conversation as exported. */
export const ExportedConversationSchema = z.object({
    title: z.string().trim().min(1).max(200),
    policy: ConversationPolicySchema,
    pinned: z.boolean().optional(),
    createdAt: z.number(),
    messages: z.array(ExportedMessageSchema).max(100_000)
});

/** The JSON export file: `cleanroom.conversations` version 1. */
export const ConversationExportFileSchema = z.object({
    format: z.literal("cleanroom.conversations"),
    version: z.literal(1),
    exportedAt: z.number(),
    conversations: z.array(ExportedConversationSchema).max(10_000)
});

export const ExportFormatSchema = z.enum(["markdown", "json"]);

/** One thing "Delete everything" checked (a table's rows, a file): whether something was there and removed, and whether anything remains. */
export const WipeCheckSchema = z.object({path: z.string(), what: z.string(), removed: z.boolean(), remains: z.boolean()});

/** What `app.deleteEverything` did: each session's scrub, each check, the model files kept, and `clean` when nothing remains. */
export const DeleteEverythingReportSchema = z.object({
    scrubs: z.array(ScrubReportSchema),
    checks: z.array(WipeCheckSchema),
    modelFilesKept: z.number().int(),
    clean: z.boolean()
});

import * as z from "zod";
import {CloudSecretsOptionsSchema} from "../secretScan/types.js";
import {CatalogIdSchema, RegisteredModelIdSchema, RegisteredModelSchema} from "../models.js";
import {ConversationIdSchema, ConversationPolicySchema, RouteRequestSchema} from "../types.js";
import {
    AppLockStateSchema, AppSettingsSchema, AuditEventSchema, CloudEndpointSchema, ContextSizeSettingSchema, ConversationSchema, GpuSettingSchema,
    ConversationSummarySchema, DetectedModelsSchema, DownloadIdSchema, IsolationReportSchema, MessageSchema, ModelLibrarySchema,
    MessageAttachmentSchema, ModelStatusSchema, ScrubReportSchema, DeleteEverythingReportSchema, SearchHitSchema, ThreadsSettingSchema, TurnStartedSchema, ExportFormatSchema
} from "./schemas.js";
import {ApiKeyIdSchema, ApiKeyInfoSchema, ApiKeyLabelSchema, ApiSessionSchema, LocalApiPortSchema, LocalApiServerStatusSchema} from "./apiServerSchemas.js";
import {
    GivenPassphraseSchema, LockAfterMinutesSchema, ResumeSnapshotMaxMiBSchema, MaxTokensSchema, MessageTextSchema, NeverSendListSchema, NewPassphraseSchema, SearchTextSchema,
    maxMessageTextLength, maxUploadChunkBytes
} from "./limits.js";
import {CitedDocumentSchema, CitedPassageSchema} from "./documentSchemas.js";
import {EngineStatusSchema} from "./engineSchemas.js";

export type CallDefinition = {input: z.ZodType, output: z.ZodType};

const conversationRef = z.strictObject({conversationId: ConversationIdSchema});
const titleSchema = z.string().trim().min(1, "a title cannot be empty").max(200);
const filePathSchema = z.string().min(1).max(4096);
/** A document attached by its path on the core's machine (#23). */
const AttachmentPathSchema = z.strictObject({path: filePathSchema.refine((path) => !path.includes("\0"), "a path without NUL characters")});
const maxAttachmentsPerTurn = 20;
/** An upload's id, as `attachments.uploadBegin` gave it. */
const UploadIdSchema = z.string().length(36).regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "an upload id from attachments.uploadBegin");
const uploadRef = z.strictObject({uploadId: UploadIdSchema});
const maxUploadChunkBase64 = 4 * Math.ceil(maxUploadChunkBytes / 3);
const downloadUrlSchema = z.string().max(4096).regex(/^(https?:\/\/|hf:)\S+$/i, "an https:// or http:// URL, or an hf: URI");
/** A composer's unsent text, kept up to the longest message that can be sent. */
const draftTextSchema = z.string().max(maxMessageTextLength);
/** An export file given back to `conversations.import`, as text. */
const importTextSchema = z.string().min(2).max(2_000_000);
const anyCaseSha256Schema = z.string().length(64).regex(/^[0-9a-fA-F]{64}$/, "64 hex digits");

/** A catalog model by id, or any GGUF URL (with its SHA-256 when known): exactly one of `catalogId` and `url`. */
const downloadRequestSchema = z.strictObject({
    catalogId: CatalogIdSchema.optional(),
    url: downloadUrlSchema.optional(),
    sha256: anyCaseSha256Schema.optional()
}).refine((request) => (request.catalogId == null) !== (request.url == null), "give either catalogId or url")
    .refine((request) => request.sha256 == null || request.url != null, "sha256 goes with url (a catalog model has its own)");

/**
 * Every call the core answers. Method names are the keys; the core validates each input with
 * its schema before anything runs. Long work (a reply) returns once started and streams events.
 */
export const coreCalls = {
    /**
     * Whether the app is locked. With a passphrase set it opens locked and locks again after
     * `idleLockMs` without a call; while locked the core holds no key and no decrypted text, and
     * answers every call but `app.lockState` and `app.unlock` with STORE_LOCKED. `unlockRetryAfterMs`,
     * present only while locked after wrong passphrases, is how long `app.unlock` still refuses (UNLOCK_BACKOFF).
     */
    "app.lockState": {
        input: z.strictObject({}),
        output: AppLockStateSchema
    },
    /** Unlocks with the passphrase (WRONG_PASSPHRASE, and nothing changed, when it does not open the database). */
    "app.unlock": {
        input: z.strictObject({passphrase: GivenPassphraseSchema}),
        output: z.object({locked: z.literal(false)})
    },
    /**
     * Sets (`current` null), changes, or removes (`next` null) the database's passphrase. A wrong
     * `current` is refused (WRONG_PASSPHRASE) with nothing changed; else every reply is stopped,
     * every session ended (scrubbed), the database closed, re-keyed atomically and reopened under
     * the new key. Removed, the key is a key file (web mode) or a new keychain-wrapped key (the app).
     */
    "app.setPassphrase": {
        input: z.strictObject({current: GivenPassphraseSchema.nullable(), next: NewPassphraseSchema.nullable()}),
        output: z.object({passphraseSet: z.boolean()})
    },
    /** Locks now: every session scrubbed, the database closed, the key dropped. Refused (INVALID_INPUT) when no passphrase is set. */
    "app.lock": {
        input: z.strictObject({}),
        output: z.object({locked: z.literal(true)})
    },
    /**
     * Delete everything, the core staying up: every reply stopped, every session ended (scrubbed),
     * every conversation, message, draft, audit event, fingerprint, canary hash and setting deleted
     * with none of their text left in the database file or its WAL, the registered-model records
     * removed (model files stay). `confirm` must be the literal "delete everything".
     */
    "app.deleteEverything": {
        input: z.strictObject({confirm: z.literal("delete everything")}),
        output: DeleteEverythingReportSchema
    },
    "conversations.list": {
        input: z.strictObject({}),
        output: z.array(ConversationSummarySchema)
    },
    /** Conversations whose title or message text holds every word of `text`: full-text search inside the encrypted database. */
    "conversations.search": {
        input: z.strictObject({text: SearchTextSchema, limit: z.number().int().min(1).max(200).optional()}),
        output: z.array(SearchHitSchema)
    },
    "conversations.create": {
        /** `incognito`: held in the core's memory only, never written to disk; gone when the core closes (quit, lock). */
        input: z.strictObject({title: titleSchema.optional(), policy: ConversationPolicySchema.optional(), incognito: z.boolean().optional()}),
        output: ConversationSchema
    },
    /**
     * The conversation to open when none is: the one active last (stored or incognito, pinned or not),
     * or a new one when there is none. One call, so that windows, tabs and reloads opening at once on an
     * empty list all get the same new conversation (a list, then a create, from each would make one each).
     */
    "conversations.latestOrNew": {
        input: z.strictObject({}),
        output: ConversationSchema
    },
    "conversations.get": {
        input: conversationRef,
        output: z.object({conversation: ConversationSchema, messages: z.array(MessageSchema), generating: z.boolean(), draft: z.string()})
    },
    /** Keeps the composer's unsent text of a conversation (an empty text removes it); `conversations.get` returns it. */
    "conversations.saveDraft": {
        input: z.strictObject({conversationId: ConversationIdSchema, text: draftTextSchema}),
        output: z.object({saved: z.boolean()})
    },
    "conversations.pin": {
        input: z.strictObject({conversationId: ConversationIdSchema, pinned: z.boolean()}),
        output: ConversationSchema
    },
    /**
     * A deletion that can be undone: the conversation's session ends (its context scrubbed) and it leaves
     * the list, kept with its id until `conversations.delete` (or the next start of the core) deletes it;
     * `conversations.restore` brings it back as it was.
     */
    "conversations.trash": {
        input: conversationRef,
        output: z.object({scrub: ScrubReportSchema.nullable()})
    },
    "conversations.restore": {
        input: conversationRef,
        output: ConversationSchema
    },
    /** One conversation (or, without an id, all of them) as Markdown or as JSON that `conversations.import` reads back. */
    "conversations.export": {
        input: z.strictObject({conversationId: ConversationIdSchema.optional(), format: ExportFormatSchema}),
        output: z.object({fileName: z.string(), mimeType: z.string(), text: z.string()})
    },
    /** Adds the conversations of a JSON export, as new conversations (new ids). */
    "conversations.import": {
        input: z.strictObject({text: importTextSchema}),
        output: z.object({imported: z.array(ConversationSchema)})
    },
    "conversations.rename": {
        input: z.strictObject({conversationId: ConversationIdSchema, title: titleSchema}),
        output: ConversationSchema
    },
    "conversations.setPolicy": {
        input: z.strictObject({conversationId: ConversationIdSchema, policy: ConversationPolicySchema}),
        output: ConversationSchema
    },
    /** Ends the conversation's session: its context is scrubbed (zeroed and verified) and freed. */
    "conversations.close": {
        input: conversationRef,
        output: z.object({scrub: ScrubReportSchema.nullable()})
    },
    /**
     * Scrubs the conversation's context, then deletes it with its messages and audit trail.
     * `purge`: `done` when its text is gone from the database file and WAL; `pending` while another
     * connection's read snapshot keeps it there (the core finishes it later: `deletion.purged`).
     */
    "conversations.delete": {
        input: conversationRef,
        output: z.object({scrub: ScrubReportSchema.nullable(), purge: z.enum(["done", "pending"])})
    },
    /**
     * Starts a reply; text arrives as `message.text` events, then `turn.finished` or `turn.error`.
     * `route`: `auto` (the default), `local` (never the network), or `cloud` (refused unless allowed).
     * `secrets`, for a cloud turn: send what the scan found redacted, or let some kinds through;
     * without it a request holding a secret is refused (SECRET_IN_CLOUD_REQUEST) before it starts.
     */
    "chat.send": {
        input: z.strictObject({
            conversationId: ConversationIdSchema, text: MessageTextSchema, maxTokens: MaxTokensSchema.optional(), route: RouteRequestSchema.optional(),
            secrets: CloudSecretsOptionsSchema.optional(),
            /** Documents for this turn (#23), by path on this machine: the desktop app only (web mode refuses them). */
            attachments: z.array(AttachmentPathSchema).max(maxAttachmentsPerTurn).optional(),
            /** A cloud turn may send the conversation's documents (the user said yes when asked, naming each). */
            sendAttachments: z.boolean().optional(),
            /** Documents for this turn uploaded on this connection (`attachments.upload*`): web mode's way to attach. */
            uploads: z.array(uploadRef).max(maxAttachmentsPerTurn).optional()
        }),
        output: TurnStartedSchema
    },
    /** Stops the conversation's reply in progress; what was produced is kept, marked interrupted. */
    /** Web mode's attachments (#23): a file sent in chunks, read once whole; held in the core's memory for this connection until sent or discarded. */
    "attachments.uploadBegin": {
        input: z.strictObject({name: z.string().trim().min(1, "a file name").max(1000), bytes: z.number().int().positive("a file that is not empty").max(Number.MAX_SAFE_INTEGER)}),
        output: z.object({uploadId: z.string()})
    },
    "attachments.uploadChunk": {
        input: z.strictObject({
            uploadId: UploadIdSchema,
            offset: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
            base64: z.string().min(1).max(maxUploadChunkBase64, `at most ${maxUploadChunkBytes} bytes a chunk`).regex(/^[A-Za-z0-9+/]*={0,2}$/, "base64")
        }),
        output: z.object({received: z.number().int()})
    },
    "attachments.uploadFinish": {
        input: uploadRef,
        output: z.object({uploadId: z.string(), name: z.string(), format: MessageAttachmentSchema.shape.format, bytes: z.number().int(), pages: z.number().int()})
    },
    "attachments.discard": {input: uploadRef, output: z.object({discarded: z.boolean()})},
    "chat.stop": {
        input: conversationRef,
        output: z.object({stopped: z.boolean()})
    },
    /** Removes the last reply (and its prompt), then asks again with the same prompt, by `route` as in `chat.send`. */
    "chat.regenerate": {
        input: z.strictObject({
            conversationId: ConversationIdSchema, maxTokens: MaxTokensSchema.optional(), route: RouteRequestSchema.optional(),
            secrets: CloudSecretsOptionsSchema.optional()
        }),
        output: TurnStartedSchema
    },
    /**
     * Edit and resend: `messageId` (a prompt) and what follows leave the shown branch, kept as an older
     * version; `text` is sent in its place as `chat.send` does. Refused before it starts: the old branch stays.
     */
    "chat.editAndResend": {
        input: z.strictObject({
            conversationId: ConversationIdSchema, messageId: z.number().int().min(1), text: MessageTextSchema,
            maxTokens: MaxTokensSchema.optional(), route: RouteRequestSchema.optional(), secrets: CloudSecretsOptionsSchema.optional()
        }),
        output: TurnStartedSchema
    },
    /** Shows another version of a message that an edit kept (`branch.previousId` / `nextId`), with its continuation. */
    "chat.showVersion": {
        input: z.strictObject({conversationId: ConversationIdSchema, messageId: z.number().int().min(1)}),
        output: z.object({messages: z.array(MessageSchema)})
    },
    /** A passage cited under a reply (#23 item 4): its text, page and lines, read from this conversation's chunks only (PASSAGE_NOT_FOUND for another's). */
    "documents.passage": {
        input: z.strictObject({conversationId: ConversationIdSchema, chunkId: z.number().int().min(1)}),
        output: CitedPassageSchema
    },
    /** A document cited under a reply as given whole, page by page: this conversation's only (PASSAGE_NOT_FOUND for another's). */
    "documents.document": {
        input: z.strictObject({conversationId: ConversationIdSchema, attachmentId: z.number().int().min(1)}),
        output: CitedDocumentSchema
    },
    "isolation.report": {
        input: conversationRef,
        output: IsolationReportSchema
    },
    "audit.events": {
        input: z.strictObject({conversationId: ConversationIdSchema.optional(), limit: z.number().int().min(1).max(5000).optional()}),
        output: z.array(AuditEventSchema)
    },
    "settings.get": {
        input: z.strictObject({}),
        output: AppSettingsSchema
    },
    /** Changes only the fields given. `cloudApiKey: null` forgets the stored key. */
    "settings.set": {
        input: z.strictObject({
            modelPath: z.string().min(1).max(4096).nullable().optional(),
            threads: ThreadsSettingSchema.optional(),
            contextSize: ContextSizeSettingSchema.optional(),
            gpu: GpuSettingSchema.optional(),
            cloudEndpoint: CloudEndpointSchema.optional(),
            cloudModel: z.string().min(1).max(256).nullable().optional(),
            cloudFallback: z.boolean().optional(),
            cloudApiKey: z.string().min(1).max(4096).nullable().optional(),
            /** "Never send these" words and phrases (replaces the list; `[]` empties it). */
            cloudNeverSend: NeverSendListSchema.optional(),
            /** Minutes of idleness before the app locks with a passphrase (0 never); null back to the default. */
            lockAfterMinutes: LockAfterMinutesSchema.nullable().optional(),
            /** Resume snapshots on or off; null back to the default (on). */
            resumeSnapshots: z.boolean().nullable().optional(),
            /** The resume snapshot size cap in MiB; null back to the default. */
            resumeSnapshotMaxMiB: ResumeSnapshotMaxMiBSchema.nullable().optional(),
            /** The embedding model for documents, a GGUF file on the core's machine (MODEL_NOT_FOUND, MODEL_NOT_GGUF); null: none, retrieval by words alone. */
            embeddingModelPath: z.string().min(1).max(4096).refine((path) => !path.includes("\0"), "a path without NUL characters").nullable().optional()
        }),
        output: AppSettingsSchema
    },
    "model.status": {
        input: z.strictObject({}),
        output: ModelStatusSchema
    },
    /** Loads a model (ending and scrubbing every session of the previous one); without `path`, the saved model path. */
    "model.load": {
        input: z.strictObject({path: z.string().min(1).max(4096).optional(), remember: z.boolean().optional()}),
        output: ModelStatusSchema
    },
    /** Registered models and the recommended catalog, each with whether it fits this machine; the default; downloads running. */
    "models.list": {
        input: z.strictObject({}),
        output: ModelLibrarySchema
    },
    /**
     * Starts a download into the models folder and returns its id at once; progress arrives as
     * `models.downloadProgress` events, ending `done` (verified and registered), `failed` or `cancelled`.
     */
    "models.download": {
        input: downloadRequestSchema,
        output: z.object({id: DownloadIdSchema})
    },
    /** Stops a download; what was received is kept, so the same download resumes. */
    "models.cancelDownload": {
        input: z.strictObject({id: DownloadIdSchema}),
        output: z.object({cancelled: z.boolean()})
    },
    /** Validates a GGUF file anywhere on disk (an absolute path) and registers it, used in place. */
    "models.import": {
        input: z.strictObject({path: filePathSchema, name: z.string().trim().min(1).max(200).optional()}),
        output: RegisteredModelSchema
    },
    /** Finds models other apps (LM Studio, Ollama, Jan, GPT4All) downloaded; `add` registers them in place (only `paths`, when given). */
    "models.detect": {
        input: z.strictObject({add: z.boolean().optional(), paths: z.array(filePathSchema).max(100).optional()}),
        output: DetectedModelsSchema
    },
    /** Loads a registered model (as `model.load` does) and, once it is ready, makes it the default for the app and `chat`. */
    "models.setDefault": {
        input: z.strictObject({id: RegisteredModelIdSchema}),
        output: z.object({defaultModelId: RegisteredModelIdSchema.nullable(), status: ModelStatusSchema})
    },
    /** Which llama.cpp binary runs models (prebuilt or built here), whether one can be built for this CPU, and the build running or last finished. */
    "engine.status": {
        input: z.strictObject({}),
        output: EngineStatusSchema
    },
    /**
     * Starts building llama.cpp for this CPU (about 10 minutes, in child processes) and returns at once; progress arrives as
     * `engine.buildProgress` events, ending `done` (used from the core's next start), `failed` or `cancelled`. ENGINE_BUILD_RUNNING while one runs.
     */
    "engine.build": {
        input: z.strictObject({}),
        output: z.object({started: z.literal(true)})
    },
    /** Stops the running build; what it made is removed, so the prebuilt binary stays in use. */
    "engine.cancelBuild": {
        input: z.strictObject({}),
        output: z.object({cancelled: z.boolean()})
    },
    /** The app's local API server (#29): whether it runs, its base URL, the model it serves, how many keys guard it. */
    "apiServer.status": {
        input: z.strictObject({}),
        output: LocalApiServerStatusSchema
    },
    /**
     * Starts the local API server on 127.0.0.1:`port` (the last one, else 1234; 0 picks a free one) on the
     * loaded model (MODEL_NOT_LOADED without one); a port in use is INVALID_INPUT. It stops when the core closes.
     */
    "apiServer.start": {
        input: z.strictObject({port: LocalApiPortSchema.optional()}),
        output: LocalApiServerStatusSchema
    },
    /** Stops it: requests in flight are stopped, each context scrubbed, before this answers. */
    "apiServer.stop": {
        input: z.strictObject({}),
        output: LocalApiServerStatusSchema
    },
    /** The local API server's newest requests (newest first): key label, context, scrub. */
    "apiServer.sessions": {
        input: z.strictObject({limit: z.number().int().min(1).max(500).optional()}),
        output: z.object({sessions: z.array(ApiSessionSchema)})
    },
    "apiKeys.list": {
        input: z.strictObject({}),
        output: z.object({keys: z.array(ApiKeyInfoSchema)})
    },
    /** A new API key under a unique label: `secret` is the key, shown this once (only its SHA-256 is stored). */
    "apiKeys.create": {
        input: z.strictObject({label: ApiKeyLabelSchema}),
        output: z.object({key: ApiKeyInfoSchema, secret: z.string()})
    },
    /** Revokes a key: a running server refuses it from its next request. */
    "apiKeys.revoke": {
        input: z.strictObject({id: ApiKeyIdSchema}),
        output: z.object({revoked: z.boolean()})
    }
} as const satisfies Record<string, CallDefinition>;

export type CoreCalls = typeof coreCalls;

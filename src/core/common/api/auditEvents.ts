import * as z from "zod";
import {describeZodIssues} from "../describeZodIssues.js";
import {type ConversationId, ConversationIdSchema, ConversationPolicySchema, RouteRequestSchema, SessionEndReasonSchema} from "../types.js";
import {CloudVerdictSchema, DroppedHistorySchema, ScrubReportSchema, WireErrorSchema} from "./recordedSchemas.js";

/**
 * The audit log's contract: one schema per event kind for the facts it records (counts, ids,
 * durations; never prompt text, replies or secrets). `AuditLog.record` accepts only these kinds with
 * these facts, and every row read back is parsed through `AuditEventSchema`.
 *
 * Adding a kind is a change here only: one `auditEvent("area.what", z.object({...}))` line in the
 * union below (and an example in test/unit/auditEvents.test.ts, which the type checker asks for).
 * Rows outlive the code that wrote them: a fact added to an existing kind is `.optional()`, so that
 * the rows recorded before it still parse; a kind is never renamed or removed (old rows keep it).
 */

/** What every event has; `kind` and `data` are added per kind. */
const auditEventBase = {
    id: z.number().int(),
    conversationId: ConversationIdSchema.nullable(),
    at: z.number()
};

function auditEvent<const Kind extends string, Data extends z.ZodObject>(kind: Kind, data: Data) {
    return z.object({...auditEventBase, kind: z.literal(kind), data});
}

/** A turn too large for the context: what it needed against what the context holds. */
export const ContextOverflowSchema = z.object({
    promptTokens: z.number().int(),
    replyBudget: z.number().int(),
    neededTokens: z.number().int(),
    contextSize: z.number().int(),
    overBy: z.number().int()
});

const ScrubFactsSchema = ScrubReportSchema.omit({verified: true}).extend({
    /** `embedding`: the scrub of an embedding context a turn used for its documents (#23); absent for a conversation's own context. */
    purpose: z.literal("embedding").optional()
});
const SecretsFoundSchema = z.object({
    requestId: z.string(),
    count: z.number().int(),
    /** How many secrets of each kind, never a value. */
    kinds: z.record(z.string(), z.number().int())
});
/**
 * Who made an API request, and what it asked: the key's label (`loopback` without keys) and, for a key, its id (two
 * keys may share a label; absent from rows recorded before it was). Never the key, nor its hash.
 */
const ApiTenantFactsSchema = z.object({
    tenant: z.string(), keyId: z.string().optional(),
    /** What was asked: a chat or text completion, or embeddings (then `maxTokens` 0); absent from rows recorded before it was. */
    kind: z.enum(["chat", "text", "embeddings"]).optional()
});
const CloudVerdictEventSchema = z.object({requestId: z.string(), verdict: CloudVerdictSchema.nullable()});

/** What a model load recorded beside its architecture, context size and threads; each absent from loads recorded before it was. */
const ModelLoadedDetailsSchema = z.object({
    fileBytes: z.number(), threadsSource: z.string(), llamaBuild: z.string(), uvThreadpoolSize: z.number().int(),
    kvBytesPerContext: z.number(), poolCapacity: z.number().int(), kvLayers: z.number().int(), kvTransposed: z.boolean(),
    kvLayoutSource: z.string(), sequenceMemory: z.string(), stateCovered: z.boolean(), stateParts: z.string(),
    gpuRequested: z.string(), gpu: z.string(), gpuDevice: z.string(), gpuLayers: z.number().int(), modelLayers: z.number().int(),
    kvReadBack: z.string(), kvDeviceLayers: z.number().int(), vulkanDevices: z.string(), deviceCheck: z.string()
});

/**
 * A row that no kind below describes: a kind this build does not know (written by a newer build),
 * or facts that do not match their kind's schema. Kept and shown as it was stored, never dropped.
 */
export const UnrecognisedAuditEventSchema = auditEvent("unrecognised", z.object({
    storedKind: z.string(),
    storedData: z.unknown(),
    /** Why the row did not parse: an unknown kind, or which of its facts did not match. */
    problem: z.string()
}));

export const AuditEventSchema = z.discriminatedUnion("kind", [
    // Conversations
    auditEvent("conversation.created", z.object({policy: ConversationPolicySchema})),
    auditEvent("conversation.policy", z.object({policy: ConversationPolicySchema})),
    auditEvent("conversation.trashed", z.object({})),
    auditEvent("conversation.restored", z.object({})),
    auditEvent("conversation.imported", z.object({})),
    auditEvent("conversation.deleted", z.object({
        /** Absent from deletions recorded before the scrub's outcome was; null: no context was open. */
        scrubVerified: z.boolean().nullable().optional(),
        /** Absent from deletions recorded before the purge was tracked. */
        purge: z.enum(["done", "pending"]).optional()
    })),
    /** Written by a migration: a conversation whose stored id broke the id rule got a fresh one. */
    auditEvent("conversation.idReplaced", z.object({reason: z.string(), oldIdLength: z.number().int()})),

    // Turns
    auditEvent("turn.local", z.object({
        /** The reply; absent from turns recorded before the audit log carried it. */
        messageId: z.number().int().optional(),
        contextId: z.string(),
        promptTokens: z.number().int(),
        evaluatedTokens: z.number().int().optional(),
        reusedTokens: z.number().int().optional(),
        generatedTokens: z.number().int(),
        finishReason: z.string(),
        kvCells: z.number().int().optional(),
        tokensInContext: z.number().int().optional()
    })),
    auditEvent("turn.cloud", z.object({
        /** The reply; absent from turns recorded before the audit log carried it. */
        messageId: z.number().int().optional(),
        requestId: z.string(),
        routeReason: z.string(),
        /** Absent from a turn stopped before its request was sent. */
        canariesPlanted: z.number().int().optional(),
        blocked: z.boolean(),
        verdict: CloudVerdictSchema.shape.kind.nullable(),
        promptTokensOurs: z.number().int().optional(),
        promptTokensReported: z.number().int().nullable().optional(),
        model: z.string().nullable().optional(),
        finishReason: z.string().nullable().optional()
    })),
    auditEvent("turn.refused", ContextOverflowSchema),
    auditEvent("turn.documents", z.object({attached: z.number().int(), whole: z.number().int(), passages: z.number().int(),
        /** Vectors given to stored chunks that had none by the chosen embedding model (brought before it was chosen); absent: none. */
        backfilledVectors: z.number().int().optional()})),
    auditEvent("history.dropped", DroppedHistorySchema.extend({policy: z.literal("drop-oldest")})),
    auditEvent("reply.regenerated", z.object({
        removedMessages: z.number().int(),
        /** Absent from regenerations recorded before a route could be asked for. */
        route: RouteRequestSchema.optional()
    })),

    // Contexts and their scrubs
    auditEvent("context.created", z.object({contextId: z.string(), kvCells: z.number().int(), kvBytes: z.number(), threads: z.number().int()})),
    /** Recorded on the conversation whose context was evicted. */
    auditEvent("context.evicted", z.object({forConversation: ConversationIdSchema})),
    auditEvent("context.disposed", z.object({contextId: z.string(), reason: SessionEndReasonSchema})),
    auditEvent("scrub.started", z.object({contextId: z.string(), reason: SessionEndReasonSchema})),
    auditEvent("scrub.verified", ScrubFactsSchema),
    auditEvent("scrub.failed", ScrubFactsSchema.extend({failure: z.string().nullable().optional()})),
    auditEvent("security.fault", z.object({
        what: z.string(),
        contextId: z.string().optional(),
        /** The error every front end shows for it: a scrub that could not be verified. */
        error: WireErrorSchema.optional()
    })),

    // The model and the machine
    auditEvent("model.loaded", z.object({architecture: z.string().nullable(), contextSize: z.number().int(), threads: z.number().int()})
        .extend(ModelLoadedDetailsSchema.partial().shape)),
    auditEvent("device.probed", z.object({
        device: z.string(), driver: z.string(), llamaBuild: z.string(), architecture: z.string(),
        passed: z.boolean(), problem: z.string(), durationMs: z.number()
    })),
    auditEvent("threads.tuned", z.object({
        threads: z.number().int(),
        measurements: z.array(z.object({
            threads: z.number().int(), tokensPerSecond: z.number(), tokens: z.number().int(), stopped: z.enum(["tokens", "time", "slower"]).optional()
        })),
        backend: z.string()
    })),
    auditEvent("scratch.swept", z.object({staleFoldersRemoved: z.number().int()})),
    auditEvent("kv.layout.discarded", z.object({contradiction: z.string()})),

    // Resume snapshots
    auditEvent("kv.snapshots.removed", z.object({removed: z.number().int(), why: z.string()})),
    /** Saved after the session end: `readMs` inside it (before the scrub), `writeMs` after it; older rows have `durationMs` (both, inside it). */
    auditEvent("kv.saved", z.object({
        reason: SessionEndReasonSchema, tokens: z.number().int(), bytes: z.number().int(),
        readMs: z.number().optional(), writeMs: z.number().optional(), durationMs: z.number().optional()
    })),
    auditEvent("kv.save.failed", z.object({reason: SessionEndReasonSchema, problem: z.string()})),
    /** Not saved: larger than the snapshot size cap (`resumeSnapshotMaxMiB`), estimated before reading or read. */
    auditEvent("kv.save.skipped", z.object({reason: SessionEndReasonSchema, bytes: z.number(), maxBytes: z.number(), why: z.string()})),
    /** Snapshots still being written when the core closed past its wait: nothing of them written, their state zeroed. */
    auditEvent("kv.save.dropped", z.object({snapshots: z.number().int(), why: z.string()})),
    auditEvent("kv.restore.refused", z.object({reason: z.string(), tokens: z.number().int(), then: z.string().optional(), now: z.string().optional()})),
    auditEvent("kv.restored", z.object({
        tokens: z.number().int(), sharedWithPrompt: z.number().int(), promptTokens: z.number().int(), durationMs: z.number()
    })),

    // The cloud
    auditEvent("cloud.settings", z.object({fallback: z.boolean(), endpointSet: z.boolean(), model: z.string().nullable()})),
    auditEvent("cloud.failed", z.object({requestId: z.string(), code: z.string(), message: z.string()})),
    auditEvent("cloud.blocked", CloudVerdictEventSchema),
    auditEvent("cloud.flagged", CloudVerdictEventSchema),
    auditEvent("cloud.warning", z.object({requestId: z.string(), warning: z.string()})),
    auditEvent("cloud.secrets.blocked", SecretsFoundSchema),
    auditEvent("cloud.secrets.redacted", SecretsFoundSchema),
    auditEvent("cloud.secrets.allowed", SecretsFoundSchema),

    // Deletion's purge of the database file
    auditEvent("deletion.pending", z.object({what: z.string(), deletions: z.number().int()})),
    auditEvent("deletion.purged", z.object({
        trigger: z.enum(["deletion", "timer", "write", "open", "close"]), deletions: z.number().int(), pendingMs: z.number()
    })),

    // The local API server (`cleanroom serve`): recorded under the request's id, with the key's label (`tenant`) and id
    auditEvent("api.refused", ContextOverflowSchema.extend(ApiTenantFactsSchema.shape)),
    auditEvent("api.request", ApiTenantFactsSchema.extend({
        promptTokens: z.number().int(), maxTokens: z.number().int(), cacheSession: z.string().optional()
    })),
    auditEvent("api.answered", ApiTenantFactsSchema.extend({
        finishReason: z.string(), promptTokens: z.number().int(), completionTokens: z.number().int(),
        cachedTokens: z.number().int(), cacheSession: z.string().optional(),
        /** Embeddings: the vectors given, one per input. */
        vectors: z.number().int().optional()
    })),
    /** An API key made or revoked in the app: its id and label, never the key. */
    auditEvent("api.keyCreated", z.object({keyId: z.string(), label: z.string()})),
    auditEvent("api.keyRevoked", z.object({keyId: z.string(), label: z.string()})),

    UnrecognisedAuditEventSchema
]);

export type AuditEvent = z.infer<typeof AuditEventSchema>;
/** The kinds `AuditLog.record` accepts (`unrecognised` is only ever read). */
export type AuditKind = Exclude<AuditEvent["kind"], "unrecognised">;
export type AuditEventOf<Kind extends AuditEvent["kind"]> = AuditEvent & {kind: Kind};
/** The facts each kind `AuditLog.record` accepts records, by kind. */
export type AuditDataByKind = {[Event in AuditEvent as Exclude<Event["kind"], "unrecognised">]: Event["data"]};
/** The facts an event of `Kind` records. */
export type AuditDataOf<Kind extends AuditKind> = AuditDataByKind[Kind];

const schemaOfKind = new Map<string, z.ZodType<AuditEvent>>(AuditEventSchema.options
    .filter((option) => option !== UnrecognisedAuditEventSchema)
    .map((option) => [option.shape.kind.value, option]));

/** A row of the audit log as stored: its kind and facts (`data_json` parsed), not yet checked. */
export type StoredAuditRow = {id: number, conversationId: ConversationId | null, at: number, kind: string, data: unknown};

/**
 * A stored row as an event: parsed by its kind's schema, or, when it does not parse (a kind this
 * build does not know, facts of another shape), kept whole as an `unrecognised` event.
 */
export function auditEventFromRow(row: StoredAuditRow): AuditEvent {
    const schema = schemaOfKind.get(row.kind);
    if (schema == null)
        return unrecognised(row, `no event of kind "${row.kind}" is known to this version of Cleanroom`);
    const parsed = schema.safeParse(row);
    if (parsed.success)
        return parsed.data;
    return unrecognised(row, `its facts do not match its kind: ${describeZodIssues(parsed.error.issues).join("; ")}`);
}

function unrecognised({id, conversationId, at, kind, data}: StoredAuditRow, problem: string): AuditEventOf<"unrecognised"> {
    return {id, conversationId, at, kind: "unrecognised", data: {storedKind: kind, storedData: data, problem}};
}

/** A filter that narrows events to one kind: `events.filter(isAuditEventOf("scrub.verified"))`. */
export function isAuditEventOf<const Kinds extends Array<AuditEvent["kind"]>>(...kinds: Kinds) {
    return (event: AuditEvent): event is AuditEventOf<Kinds[number]> => kinds.includes(event.kind);
}

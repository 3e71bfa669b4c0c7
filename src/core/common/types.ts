import {z} from "zod";
import {MaxTokensSchema, SeedSchema, TemperatureSchema} from "./api/limits.js";

/**
 * The one rule for conversation ids, applied at every door (CLI, RPC, store): an id the store
 * accepts is one every front end can open and delete. Not a path: `.` and `..` are refused too.
 */
export const ConversationIdSchema = z.string()
    .min(1, "an id cannot be empty")
    .max(128, "an id has at most 128 characters")
    .regex(/^[A-Za-z0-9_.:-]+$/, "an id has letters, digits and _ . : - only")
    .refine((id) => id !== "." && id !== "..", "an id cannot be . or ..");
export type ConversationId = z.infer<typeof ConversationIdSchema>;

export const ConversationPolicySchema = z.enum(["local", "cloud-allowed"]);
export type ConversationPolicy = z.infer<typeof ConversationPolicySchema>;

/** What happens when the history no longer fits the model's window. */
export const HistoryPolicySchema = z.enum(["drop-oldest", "refuse"]);
export type HistoryPolicy = z.infer<typeof HistoryPolicySchema>;

export const SamplingSettingsSchema = z.object({
    /** 0 means greedy decoding. */
    temperature: TemperatureSchema.default(0.7),
    topK: z.number().int().min(0).max(1000).default(40),
    topP: z.number().min(0).max(1).default(0.95),
    seed: SeedSchema.nullable().default(null),
    maxTokens: MaxTokensSchema.default(512)
});
export type SamplingSettings = z.infer<typeof SamplingSettingsSchema>;

export const ConversationSettingsSchema = z.object({
    systemPrompt: z.string().max(20_000).default("You are a helpful, honest assistant."),
    sampling: SamplingSettingsSchema.default(SamplingSettingsSchema.parse({})),
    historyPolicy: HistoryPolicySchema.default("drop-oldest")
});
export type ConversationSettings = z.infer<typeof ConversationSettingsSchema>;

export const MessageStatusSchema = z.enum(["complete", "streaming", "interrupted", "blocked"]);
export type MessageStatus = z.infer<typeof MessageStatusSchema>;

export const MessageRoleSchema = z.enum(["user", "assistant"]);
export type MessageRole = z.infer<typeof MessageRoleSchema>;

export const RouteSchema = z.enum(["local", "cloud"]);
export type Route = z.infer<typeof RouteSchema>;

/** Where the user asks a turn to go. `auto`: local, unless the local engine cannot serve it and the cloud is allowed. */
export const RouteRequestSchema = z.enum(["auto", "local", "cloud"]);
export type RouteRequest = z.infer<typeof RouteRequestSchema>;

export const CloudVerdictKindSchema = z.enum(["cross-request", "foreign-canary", "fingerprint", "truncation"]);
export type CloudVerdictKind = z.infer<typeof CloudVerdictKindSchema>;

/** Why a cloud reply was blocked or flagged. Holds kinds, offsets and lengths: never the text. */
export type CloudVerdict = {
    kind: CloudVerdictKind,
    blocked: boolean,
    detail: string,
    findings: Array<{kind: string, start: number, end: number}>
};

export type Message = {
    id: number,
    conversationId: ConversationId,
    role: MessageRole,
    content: string,
    status: MessageStatus,
    route: Route | null,
    routeReason: string | null,
    tokens: number | null,
    /** Set on cloud replies that were blocked or flagged. */
    verdict?: CloudVerdict | null,
    createdAt: number,
    updatedAt: number
};

export type Conversation = {
    id: ConversationId,
    title: string,
    policy: ConversationPolicy,
    settings: ConversationSettings,
    createdAt: number,
    updatedAt: number
};

export type ConversationSummary = Conversation & {messageCount: number};

export type ScrubReport = {
    contextId: string,
    kvCells: number,
    layers: number,
    /** Bytes of K/V payload written as zeros. */
    bytesZeroed: number,
    /** Bytes of K/V payload read back and checked. */
    bytesChecked: number,
    nonZeroBytes: number,
    cellsReadBack: number,
    verified: boolean,
    durationMs: number,
    reason: SessionEndReason,
    /**
     * Where the KV layout the scrub used came from: learned at model load, cached by an earlier load
     * (proved again by this scrub), or learned again because this scrub contradicted the cached one.
     * Absent from scrubs recorded before the KV layout was cached.
     */
    layoutSource?: "learned" | "cached" | "relearned"
};

/** Why a session ended; `abort`: its turn was cancelled, `fault`: its turn failed (the half-evaluated context is never reused). */
export const SessionEndReasonSchema = z.enum(["close", "delete", "evict", "idle", "unload", "shutdown", "abort", "fault", "selftest"]);
export type SessionEndReason = z.infer<typeof SessionEndReasonSchema>;

export type AuditEvent = {
    id: number,
    conversationId: ConversationId | null,
    at: number,
    kind: string,
    data: Record<string, unknown>
};

export type IsolationInfo = {
    contextId: string,
    kvCells: number,
    kvBytes: number,
    threads: number
};

export type DroppedHistory = {
    /** Messages left out of the model's window by the `drop-oldest` policy (still kept in the database). */
    droppedMessages: number,
    droppedTokens: number
};

export type LocalTurnResult = {
    conversationId: ConversationId,
    route: Route,
    routeReason: string,
    userMessageId: number,
    assistantMessageId: number,
    reply: string,
    status: MessageStatus,
    tokens: {prompt: number, evaluated: number, reused: number, generated: number},
    finishReason: "stop" | "maxTokens" | "aborted",
    history: DroppedHistory,
    /** The local context that served the turn; null for a cloud turn. */
    isolation: IsolationInfo | null,
    timings: {firstTokenMs: number | null, totalMs: number, tokensPerSecond: number | null},
    /** Only for cloud turns. */
    cloud?: CloudTurnInfo
};

export type CloudTurnInfo = {
    requestId: string,
    blocked: boolean,
    verdict: CloudVerdict | null,
    warnings: string[],
    canariesPlanted: number,
    /** Ours, as the endpoint's tokenizer counts them (`countedBy: "endpoint"`) or as we estimate; what the server reported. */
    promptTokens: {ours: number, reported: number | null, countedBy: "endpoint" | "estimate"},
    model: string | null,
    finishReason: string | null
};

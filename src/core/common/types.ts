import * as z from "zod";
import {MaxTokensSchema, SeedSchema, TemperatureSchema} from "./api/limits.js";
import type {
    AuditEventSchema, CloudTurnInfoSchema, CloudTurnViewSchema, CloudVerdictSchema, ConversationSchema, ConversationSummarySchema,
    DroppedHistorySchema, SearchHitSchema, IsolationInfoSchema, LocalTurnViewSchema, MessageAttachmentSchema, MessageSchema, ScrubReportSchema, TurnAttachmentSchema
} from "./api/schemas.js";

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

// The shapes below cross the API: each is its zod schema's type (`./api/schemas.ts`), written once.

export type CloudVerdict = z.infer<typeof CloudVerdictSchema>;
export type Message = z.infer<typeof MessageSchema>;
export type MessageAttachment = z.infer<typeof MessageAttachmentSchema>;
export type TurnAttachment = z.infer<typeof TurnAttachmentSchema>;
export type Conversation = z.infer<typeof ConversationSchema>;
export type ConversationSummary = z.infer<typeof ConversationSummarySchema>;
export type SearchHit = z.infer<typeof SearchHitSchema>;
export type ScrubReport = z.infer<typeof ScrubReportSchema>;

/**
 * Why a session ended; `abort`: its turn was cancelled, `fault`: its turn failed (the half-evaluated context is never reused),
 * `request`: the API request it served (`cleanroom serve`) has been answered.
 */
export const SessionEndReasonSchema = z.enum(["close", "delete", "evict", "idle", "unload", "shutdown", "abort", "fault", "selftest", "request"]);
export type SessionEndReason = z.infer<typeof SessionEndReasonSchema>;

export type AuditEvent = z.infer<typeof AuditEventSchema>;
export type IsolationInfo = z.infer<typeof IsolationInfoSchema>;
export type DroppedHistory = z.infer<typeof DroppedHistorySchema>;
export type CloudTurnInfo = z.infer<typeof CloudTurnInfoSchema>;

/** A turn the local engine served: what `turn.finished` carries, with the reply's text. */
export type LocalTurnResult = z.infer<typeof LocalTurnViewSchema> & {
    reply: string,
    /** [token, probability] of the first generated token, when the turn was asked to keep them. */
    firstTokenProbabilities?: Array<[number, number]>
};

/** A turn the shared cloud served, canary-checked: what `turn.finished` carries, with the reply's text and the whole cloud report. */
export type CloudTurnResult = Omit<z.infer<typeof CloudTurnViewSchema>, "cloud"> & {
    reply: string,
    cloud: CloudTurnInfo
};

/** What a turn returns: a local or a cloud turn, told apart by `route`. */
export type TurnOutcome = LocalTurnResult | CloudTurnResult;

import * as z from "zod";
import {ConversationIdSchema, SessionEndReasonSchema} from "../types.js";
import {LocalApiServerStatusSchema} from "./apiServerSchemas.js";
import {EngineBuildProgressSchema} from "./engineSchemas.js";
import {AppLockStateSchema, AuditEventSchema, CoreStatusSchema, DownloadProgressEventSchema, TurnResultSchema, TurnStartedSchema, WireErrorSchema} from "./schemas.js";

/**
 * A session that ended with no call waiting for it (evicted, idle, another model loaded) whose KV
 * scrub could not be verified: the error to show, as a call would have got it. Its audit rows
 * (`scrub.failed`, `security.fault`) are recorded as for any other end.
 */
export const BackgroundScrubFaultSchema = z.object({
    conversationId: ConversationIdSchema,
    contextId: z.string(),
    reason: SessionEndReasonSchema,
    error: WireErrorSchema
});
export type BackgroundScrubFault = z.infer<typeof BackgroundScrubFaultSchema>;

/** Every event the core emits. Event names are the keys; payloads follow the schemas. */
export const coreEvents = {
    "turn.started": TurnStartedSchema,
    /** One piece of a reply as it streams. */
    "message.text": z.object({conversationId: ConversationIdSchema, messageId: z.number().int(), text: z.string()}),
    "turn.finished": TurnResultSchema,
    /** A turn failed after it started, or a regenerate could not start; nothing further streams for it. */
    "turn.error": z.object({conversationId: ConversationIdSchema, messageId: z.number().int().nullable(), error: WireErrorSchema}),
    "audit.event": AuditEventSchema,
    "scrub.backgroundFault": BackgroundScrubFaultSchema,
    "core.status": CoreStatusSchema,
    /** The app locked (`app.lock`, the idle time), unlocked, or its passphrase was set or removed: the lock state as `app.lockState` gives it. */
    "app.lockChanged": AppLockStateSchema,
    /** Requests of the local API server being answered (and their contexts scrubbed), as the count changes: the app's idle lock waits while any is. */
    "api.activity": z.object({requestsInFlight: z.number().int().nonnegative()}),
    /** The app's local API server started or stopped (by the user, with the app, or as the core closes), or could not start with the app. */
    "apiServer.status": LocalApiServerStatusSchema,
    /** A model download's progress, in order, ending with `done`, `failed` or `cancelled`. */
    "models.downloadProgress": DownloadProgressEventSchema,
    /** The engine build's progress (`engine.build`), in order, ending with `done`, `failed` or `cancelled`. */
    "engine.buildProgress": EngineBuildProgressSchema
} as const satisfies Record<string, z.ZodType>;

export type CoreEvents = typeof coreEvents;

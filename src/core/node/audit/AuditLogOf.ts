import type {ConversationId} from "../../common/types.js";
import type {AuditLog} from "./AuditLog.js";

/**
 * Names the audit log that holds a conversation's trail: the core's `ConversationRouter` (an
 * incognito conversation's trail is in memory), or one `AuditLog`, which holds every trail itself.
 * `null`: events of no conversation (a model load, a device probe).
 */
export type AuditLogOf = {
    auditOf(conversationId: ConversationId | null): AuditLog
};

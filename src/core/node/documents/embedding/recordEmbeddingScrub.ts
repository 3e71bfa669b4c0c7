import {ScrubUnverifiedError} from "../../../common/errors.js";
import type {ConversationId} from "../../../common/types.js";
import type {AuditLog} from "../../audit/AuditLog.js";
import type {EmbeddingScrub} from "./DocumentEmbedder.js";

/**
 * Records the scrub that ended an embedding context, under `owner` (a conversation, or an API
 * request's id). A scrub that could not be verified is a security fault: recorded, then thrown
 * (`ScrubUnverifiedError`), so that what used the context does not go on.
 */
export function recordEmbeddingScrub(audit: AuditLog, owner: ConversationId | null, scrub: EmbeddingScrub): void {
    const data = {
        contextId: scrub.contextId, purpose: "embedding" as const, reason: "request" as const, kvCells: scrub.kvCells, layers: scrub.layers,
        bytesZeroed: scrub.bytesZeroed, bytesChecked: scrub.bytesChecked, nonZeroBytes: scrub.nonZeroBytes, cellsReadBack: scrub.cellsReadBack,
        durationMs: Math.round(scrub.durationMs * 1000) / 1000, layoutSource: scrub.layoutSource,
        ...scrub.method == null ? {} : {method: scrub.method}
    };
    if (scrub.verified) {
        audit.record({kind: "scrub.verified", conversationId: owner, data});
        return;
    }
    const error = new ScrubUnverifiedError(scrub);
    audit.record({kind: "scrub.failed", conversationId: owner, data: {...data, failure: scrub.failure}});
    audit.record({kind: "security.fault", conversationId: owner, data: {
        contextId: scrub.contextId, what: "the KV scrub of an embedding context could not be verified; the context was discarded", error: error.toWire()
    }});
    throw error;
}

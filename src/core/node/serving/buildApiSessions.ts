import type {ApiSession} from "../../common/api/apiServerSchemas.js";
import {isAuditEventOf} from "../../common/api/auditEvents.js";
import type {AuditLog} from "../audit/AuditLog.js";

/** How many of the newest API requests the Isolation panel lists. Defaults to `50`. */
export const defaultApiSessionsShown = 50;

/**
 * The local API server's newest requests, newest first, as the Isolation panel lists them: each from
 * its own audit trail (recorded under its request id: the request, its context, its scrub, its answer).
 */
export function buildApiSessions(audit: AuditLog, limit = defaultApiSessionsShown): ApiSession[] {
    const starts = audit.events({kinds: ["api.request", "api.refused"], limit}).reverse();
    return starts.map((start): ApiSession => {
        const requestId = start.conversationId ?? "";
        const asked = {tenant: start.data.tenant, keyId: start.data.keyId ?? null, kind: start.data.kind ?? null};
        if (start.kind === "api.refused")
            return {
                requestId, ...asked, at: start.at, outcome: "refused",
                promptTokens: start.data.promptTokens, completionTokens: null, vectors: null, contextId: null, cacheSession: null, scrub: null
            };
        const trail = audit.events({conversationId: requestId, limit: null});
        const answered = trail.find(isAuditEventOf("api.answered"));
        const created = trail.find(isAuditEventOf("context.created"));
        const scrubEvent = trail.findLast(isAuditEventOf("scrub.verified", "scrub.failed"));
        return {
            requestId, ...asked, at: start.at,
            outcome: answered != null ? "answered" : scrubEvent != null ? "failed" : "running",
            promptTokens: start.data.promptTokens,
            completionTokens: start.data.kind === "embeddings" ? null : answered?.data.completionTokens ?? null,
            vectors: answered?.data.vectors ?? null,
            contextId: created?.data.contextId ?? scrubEvent?.data.contextId ?? null,
            cacheSession: start.data.cacheSession ?? null,
            scrub: scrubEvent == null ? null : {...scrubEvent.data, verified: scrubEvent.kind === "scrub.verified", at: scrubEvent.at}
        };
    });
}

import type {ApiSession} from "../../common/api/apiServerSchemas.js";
import type {ScrubReport} from "../../common/types.js";
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
        const data = start.data;
        if (start.kind === "api.refused")
            return {
                requestId, tenant: stringOf(data.tenant) ?? "unknown", at: start.at, outcome: "refused",
                promptTokens: numberOf(data.promptTokens), completionTokens: null, contextId: null, cacheSession: null, scrub: null
            };
        const trail = audit.events({conversationId: requestId, limit: null});
        const answered = trail.find((event) => event.kind === "api.answered");
        const created = trail.find((event) => event.kind === "context.created");
        const scrubEvent = trail.findLast((event) => event.kind === "scrub.verified" || event.kind === "scrub.failed");
        const cacheSession = stringOf(data.cacheSession);
        return {
            requestId, tenant: stringOf(data.tenant) ?? "unknown", at: start.at,
            outcome: answered != null ? "answered" : scrubEvent != null ? "failed" : "running",
            promptTokens: numberOf(data.promptTokens),
            completionTokens: numberOf(answered?.data.completionTokens),
            contextId: stringOf(created?.data.contextId) ?? stringOf(scrubEvent?.data.contextId),
            cacheSession,
            scrub: scrubEvent == null ? null : {
                ...(scrubEvent.data as Omit<ScrubReport, "verified">),
                verified: scrubEvent.kind === "scrub.verified",
                at: scrubEvent.at
            }
        };
    });
}

function stringOf(value: unknown): string | null {
    return typeof value === "string" ? value : null;
}

function numberOf(value: unknown): number | null {
    return typeof value === "number" ? value : null;
}

import type {AuditEvent} from "../../../src/core/common/api/auditEvents.js";
import {formatTime} from "../format.js";

const labels: Partial<Record<AuditEvent["kind"], string>> = {
    "conversation.created": "Conversation created",
    "conversation.policy": "Policy changed",
    "context.created": "Context created",
    "turn.local": "Local turn",
    "turn.cloud": "Cloud turn",
    "turn.refused": "Turn refused (too large)",
    "history.dropped": "Older turns left out",
    "scrub.started": "Scrub started",
    "scrub.verified": "Scrub verified",
    "scrub.failed": "Scrub FAILED",
    "security.fault": "Security fault",
    "context.disposed": "Context disposed",
    "context.evicted": "Context evicted",
    "reply.regenerated": "Reply regenerated",
    "cloud.blocked": "Cloud reply BLOCKED",
    "cloud.flagged": "Cloud reply flagged",
    "cloud.warning": "Cloud warning",
    "cloud.failed": "Cloud request failed",
    "cloud.secrets.blocked": "Cloud request held: secrets found, nothing sent",
    "cloud.secrets.redacted": "Cloud request sent with secrets redacted",
    "cloud.secrets.allowed": "Cloud request sent with secrets allowed",
    "unrecognised": "Unrecognised event"
};

const shownData = [
    "contextId", "purpose", "method", "backfilledVectors", "reason", "bytesZeroed", "generatedTokens", "promptTokens", "finishReason", "policy", "overBy",
    "routeReason", "canariesPlanted", "verdict", "code", "route", "warning", "kinds"
];

/** The conversation's audit trail, newest first. */
export function AuditTimeline({events}: {events: AuditEvent[]}) {
    return (
        <div className="card">
            <div className="card-title">Audit timeline</div>
            <ol className="timeline" tabIndex={0} aria-label="Audit trail">
                {[...events].reverse().map((event) => (
                    <li key={event.id} className={`timeline-item kind-${event.kind.replace(/\./g, "-")}`}>
                        <span className="timeline-time">{formatTime(event.at)}</span>
                        <span className="timeline-kind">{labels[event.kind] ?? event.kind}</span>
                        <span className="timeline-data">{summarize(event)}</span>
                    </li>
                ))}
            </ol>
        </div>
    );
}

/**
 * The event's simple facts; objects (e.g. a blocked reply's verdict) are summarised by their kind.
 * A row this version does not recognise (an older or newer kind) is shown by its stored kind and why.
 */
function summarize(event: AuditEvent): string {
    if (event.kind === "unrecognised")
        return `${event.data.storedKind}: ${event.data.problem}`;
    const data: Readonly<Record<string, unknown>> = event.data;
    return shownData
        .map((key) => [key, factOf(key, data[key])] as const)
        .filter(([, value]) => value != null)
        .map(([key, value]) => `${key} ${value}`)
        .join(" · ");
}

function factOf(key: string, value: unknown): string | null {
    if (typeof value === "string")
        return key === "contextId" ? value.slice(0, 8) : value;
    if (typeof value === "number" || typeof value === "boolean")
        return String(value);
    if (typeof value === "object" && value != null && "kind" in value && typeof value.kind === "string")
        return value.kind;
    if (key === "kinds" && typeof value === "object" && value != null) // secrets found: how many of each kind, never a value
        return Object.entries(value).map(([kind, count]) => `${kind} ×${String(count)}`).join(", ");
    return null;
}

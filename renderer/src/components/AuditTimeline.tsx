import type {AuditEvent} from "../../../src/core/common/types.js";
import {formatTime} from "../format.js";

const labels: Record<string, string> = {
    "conversation.created": "Conversation created",
    "conversation.policy": "Policy changed",
    "context.created": "Context created",
    "turn.local": "Local turn",
    "turn.cloud": "Cloud turn",
    "turn.refused": "Turn refused (too large)",
    "history.dropped": "Older turns left out",
    "scrub.verified": "Scrub verified",
    "scrub.failed": "Scrub FAILED",
    "security.fault": "Security fault",
    "context.disposed": "Context disposed",
    "context.evicted": "Context evicted",
    "reply.regenerated": "Reply regenerated"
};

const shownData = ["contextId", "reason", "bytesZeroed", "generatedTokens", "promptTokens", "finishReason", "policy", "overBy"];

/** The conversation's audit trail, newest first. */
export function AuditTimeline({events}: {events: AuditEvent[]}) {
    return (
        <div className="card">
            <div className="card-title">Audit timeline</div>
            <ol className="timeline">
                {[...events].reverse().map((event) => (
                    <li key={event.id} className={`timeline-item kind-${event.kind.replace(/\./g, "-")}`}>
                        <span className="timeline-time">{formatTime(event.at)}</span>
                        <span className="timeline-kind">{labels[event.kind] ?? event.kind}</span>
                        <span className="timeline-data">{summarize(event.data)}</span>
                    </li>
                ))}
            </ol>
        </div>
    );
}

function summarize(data: Record<string, unknown>): string {
    return shownData
        .filter((key) => data[key] != null)
        .map((key) => `${key} ${key === "contextId" ? String(data[key]).slice(0, 8) : String(data[key])}`)
        .join(" · ");
}

import type {Message} from "../../../src/core/common/types.js";

const statusLabels: Record<Message["status"], string | null> = {
    complete: null,
    streaming: "Generating…",
    interrupted: "Stopped",
    blocked: "Blocked"
};

/** A message's header: who wrote it, where a reply came from (and why, for the cloud), its status, a flag. */
export function MessageMeta({message}: {message: Message}) {
    const isReply = message.role === "assistant";
    const flagged = message.verdict != null && !message.verdict.blocked && message.status !== "blocked";
    return (
        <header className="message-meta">
            <span className="message-author">{isReply ? "Assistant" : "You"}</span>
            {isReply && message.route != null && <span className={`route-chip route-${message.route}`}>{message.route}</span>}
            {statusLabels[message.status] != null && <span className={`status-chip status-${message.status}`}>{statusLabels[message.status]}</span>}
            {flagged && <span className="status-chip status-flagged" title={message.verdict!.detail}>⚠ Flagged: {message.verdict!.kind}</span>}
            {isReply && message.route === "cloud" && message.routeReason != null && (
                <span className="route-reason">Sent to the cloud: {message.routeReason}</span>
            )}
        </header>
    );
}

import {useState} from "react";
import type {MessageView as Message} from "../../../src/core/common/api/index.js";
import {Markdown} from "./Markdown.js";

const statusLabels: Record<Message["status"], string | null> = {
    complete: null,
    streaming: "Generating…",
    interrupted: "Stopped",
    blocked: "Blocked"
};

/** One chat message as an article: Markdown for replies, plain text for prompts, with Copy and (last reply) Regenerate. */
export function MessageItem({message, canRegenerate, onRegenerate}: {message: Message, canRegenerate: boolean, onRegenerate: () => void}) {
    const [copied, setCopied] = useState(false);
    const isReply = message.role === "assistant";
    const copy = async () => {
        try {
            await navigator.clipboard.writeText(message.content);
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
        } catch {
            setCopied(false);
        }
    };

    return (
        <article className={`message message-${message.role} message-${message.status}`} aria-label={isReply ? "Assistant message" : "Your message"}
            data-status={message.status} aria-busy={message.status === "streaming"}>
            <header className="message-meta">
                <span className="message-author">{isReply ? "Assistant" : "You"}</span>
                {isReply && message.route != null && <span className={`route-chip route-${message.route}`}>{message.route === "local" ? "local" : "cloud"}</span>}
                {statusLabels[message.status] != null && <span className={`status-chip status-${message.status}`}>{statusLabels[message.status]}</span>}
            </header>
            {message.status === "blocked"
                ? (
                    <p className="blocked-notice">
                        This reply was blocked: the cloud response failed its contamination checks and was discarded.
                        {message.verdict != null && <span className="blocked-detail"> ({message.verdict.kind}: {message.verdict.detail})</span>}
                    </p>
                )
                : isReply
                    ? message.content === "" && message.status === "streaming"
                        ? <p className="typing" aria-label="Generating"><span /><span /><span /></p>
                        : <Markdown text={message.content} />
                    : <p className="prompt-text">{message.content}</p>}
            {isReply && message.status !== "streaming" && message.status !== "blocked" && (
                <footer className="message-actions">
                    <button type="button" className="text-button" onClick={() => void copy()}>{copied ? "Copied" : "Copy"}</button>
                    {canRegenerate && <button type="button" className="text-button" onClick={onRegenerate}>Regenerate</button>}
                </footer>
            )}
        </article>
    );
}

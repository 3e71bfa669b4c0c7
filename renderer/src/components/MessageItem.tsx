import {useState} from "react";
import type {Message} from "../../../src/core/common/types.js";
import {BlockedNotice} from "./BlockedNotice.js";
import {Markdown} from "./Markdown.js";
import {MessageMeta} from "./MessageMeta.js";

/**
 * One chat message as an article: Markdown for replies, plain text for prompts, with Copy and
 * (last reply) Regenerate; a blocked cloud reply shows why, and (last reply) Retry locally.
 */
export function MessageItem({message, canRegenerate, onRegenerate, onRetryLocally}: {
    message: Message, canRegenerate: boolean, onRegenerate: () => void, onRetryLocally: (() => void) | null
}) {
    const [copied, setCopied] = useState(false);
    const isReply = message.role === "assistant";
    const flagged = message.verdict != null && !message.verdict.blocked && message.status !== "blocked";
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
        <article className={`message message-${message.role} message-${message.status}${flagged ? " message-flagged" : ""}`}
            aria-label={isReply ? "Assistant message" : "Your message"}
            data-status={message.status} data-route={message.route ?? undefined} aria-busy={message.status === "streaming"}>
            <MessageMeta message={message} />
            {message.status === "blocked"
                ? <BlockedNotice verdict={message.verdict} onRetryLocally={onRetryLocally} />
                : isReply
                    ? message.content === "" && message.status === "streaming"
                        ? <p className="typing" aria-label="Generating"><span /><span /><span /></p>
                        : <Markdown text={message.content} />
                    : <p className="prompt-text">{message.content}</p>}
            {flagged && <p className="flag-detail">{message.verdict!.detail}</p>}
            {isReply && message.status !== "streaming" && message.status !== "blocked" && (
                <footer className="message-actions">
                    <button type="button" className="text-button" onClick={() => void copy()}>{copied ? "Copied" : "Copy"}</button>
                    {canRegenerate && <button type="button" className="text-button" onClick={onRegenerate}>Regenerate</button>}
                </footer>
            )}
        </article>
    );
}

import {useState} from "react";
import type {Message} from "../../../src/core/common/types.js";
import {copyText} from "../copyText.js";
import {formatEnglishCount} from "../format.js";
import {BlockedNotice} from "./BlockedNotice.js";
import {Markdown} from "./Markdown.js";
import {MessageMeta} from "./MessageMeta.js";
import {AttachmentChips} from "./AttachmentChips.js";
import {Citations, type OpenCitation} from "./Citations.js";

/**
 * One chat message as an article: Markdown for replies, plain text for prompts. Every message can
 * be copied; a prompt can be edited and resent (the earlier version kept, and reachable with the
 * version arrows); the last reply can be regenerated. Under a reply: its tokens and speed. A blocked
 * cloud reply shows why, and (last reply) Retry locally. A reply given documents cites them (#23).
 */
export function MessageItem({message, canRegenerate, canEdit, onRegenerate, onRetryLocally, onEdit, onShowVersion, onOpenCitation}: {
    message: Message, canRegenerate: boolean, canEdit: boolean, onRegenerate: () => void, onRetryLocally: (() => void) | null,
    onEdit: () => void, onShowVersion: (messageId: number) => void, onOpenCitation?: OpenCitation
}) {
    const [copied, setCopied] = useState(false);
    const isReply = message.role === "assistant";
    const flagged = message.verdict != null && !message.verdict.blocked && message.status !== "blocked";
    const copy = async () => {
        const ok = await copyText(message.content);
        setCopied(ok);
        if (ok)
            setTimeout(() => setCopied(false), 1500);
    };
    const streaming = message.status === "streaming";

    return (
        <article className={`message message-${message.role} message-${message.status}${flagged ? " message-flagged" : ""}`}
            aria-label={isReply ? "Assistant message" : "Your message"}
            data-status={message.status} data-route={message.route ?? undefined} aria-busy={streaming}>
            <MessageMeta message={message} />
            {message.status === "blocked"
                ? <BlockedNotice verdict={message.verdict} onRetryLocally={onRetryLocally} />
                : isReply
                    ? message.content === "" && streaming
                        ? <p className="typing" role="status"><span className="typing-dots" aria-hidden="true"><span /><span /><span /></span> Waiting for the first token…</p>
                        : <Markdown text={message.content} />
                    : <p className="prompt-text">{message.content}</p>}
            <AttachmentChips label="Attached documents" attachments={(message.attachments ?? []).map(({id, name, bytes, pages, tokens}) => ({key: String(id), name, bytes, pages, tokens}))} />
            {isReply && !streaming && onOpenCitation != null && <Citations citations={message.citations ?? []} onOpen={onOpenCitation} />}
            {flagged && <p className="flag-detail">{message.verdict!.detail}</p>}
            {!streaming && message.status !== "blocked" && (
                <footer className="message-actions">
                    {message.branch != null && (
                        <span className="versions" role="group" aria-label="Versions">
                            <button type="button" className="icon-button" aria-label="Previous version" disabled={message.branch.previousId == null || !canEdit}
                                onClick={() => message.branch?.previousId != null && onShowVersion(message.branch.previousId)}>‹</button>
                            <span className="versions-count">{message.branch.index + 1} / {message.branch.count}</span>
                            <button type="button" className="icon-button" aria-label="Next version" disabled={message.branch.nextId == null || !canEdit}
                                onClick={() => message.branch?.nextId != null && onShowVersion(message.branch.nextId)}>›</button>
                        </span>
                    )}
                    <button type="button" className="text-button" aria-label={copied ? "Message copied" : "Copy message"} onClick={() => void copy()}>{copied ? "Copied" : "Copy"}</button>
                    {!isReply && canEdit && <button type="button" className="text-button" aria-label="Edit message" title="Edit and resend (the earlier version is kept)" onClick={onEdit}>Edit</button>}
                    {canRegenerate && <button type="button" className="text-button" onClick={onRegenerate}>Regenerate</button>}
                    {isReply && <ReplyStats message={message} />}
                </footer>
            )}
        </article>
    );
}

/** A reply's size and speed: its tokens and, for a local reply, tokens per second. */
function ReplyStats({message}: {message: Message}) {
    if (message.tokens == null)
        return null;
    const speed = message.tokensPerSecond;
    return (
        <span className="reply-stats" aria-label="Reply statistics">
            {formatEnglishCount(message.tokens)} tokens{speed != null && speed > 0 ? ` · ${speed >= 100 ? Math.round(speed) : speed.toFixed(1)} tokens/s` : ""}
        </span>
    );
}

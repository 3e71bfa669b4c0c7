import {useEffect, useRef, useState, type ReactNode} from "react";
import type {Message} from "../../../src/core/common/types.js";
import type {Conversation, ConversationPolicy, RouteRequest} from "../../../src/core/common/types.js";
import {cloudUsable, type CloudAccess} from "../cloudAccess.js";
import type {UploadedAttachment} from "../uploadAttachment.js";
import {Composer, type EditingMessage} from "./Composer.js";
import {MessageItem} from "./MessageItem.js";
import type {Citation} from "../../../src/core/common/api/documentSchemas.js";
import type {CitedText} from "./Citations.js";
import {PolicyControl} from "./PolicyControl.js";
import {IncognitoIcon} from "./Sidebar.js";

/**
 * The open conversation: its header (with the narrow layout's toggles and the export menu), its
 * messages (following the stream) and the composer, which keeps the conversation's draft.
 */
export function ChatView({conversation, messages, draft, generating, modelReady, cloud, headerStart, headerEnd,
    onSend, onResend, onStop, onRegenerate, onSetPolicy, onShowVersion, onSaveDraft, onUpload, onDiscardUpload, onOpenCitation}: {
    conversation: Conversation | null, messages: Message[], draft: string | null, generating: boolean, modelReady: boolean, cloud: CloudAccess,
    headerStart?: ReactNode, headerEnd?: ReactNode,
    onSend: (text: string, route: RouteRequest, attachments: UploadedAttachment[]) => Promise<boolean>,
    onResend: (messageId: number, text: string, route: RouteRequest) => Promise<boolean>,
    onStop: () => void, onRegenerate: (route: RouteRequest) => void,
    onSetPolicy: (policy: ConversationPolicy) => void, onShowVersion: (messageId: number) => void,
    onSaveDraft: (conversationId: string, text: string) => Promise<void>,
    onUpload: (file: File) => Promise<UploadedAttachment>,
    onDiscardUpload: (uploadId: string) => void,
    /** Reads the text of a citation under a reply (#23): the passage or document it names, of this conversation. */
    onOpenCitation?: (conversationId: string, citation: Citation) => Promise<CitedText>
}) {
    const scroller = useRef<HTMLDivElement>(null);
    const [editing, setEditing] = useState<EditingMessage | null>(null);
    const lastLength = messages.at(-1)?.content.length ?? 0;
    const lastStatus = messages.at(-1)?.status;
    useEffect(() => {
        const element = scroller.current;
        if (element != null)
            element.scrollTop = element.scrollHeight;
    }, [messages.length, lastLength, lastStatus]);
    useEffect(() => setEditing(null), [conversation?.id]);

    if (conversation == null)
        return (
            <main className="chat chat-empty" aria-label="Chat">
                <header className="chat-header">{headerStart}<h1 className="chat-title">Cleanroom</h1>{headerEnd}</header>
                <div className="empty-state" role="status">
                    <h2>Opening a conversation…</h2>
                </div>
            </main>
        );

    const lastReply = messages.findLast((message) => message.role === "assistant");
    const lastPrompt = messages.findLast((message) => message.role === "user");
    const canSendToCloud = cloudUsable(conversation.policy, cloud);
    const canEdit = !generating && (modelReady || canSendToCloud);
    const edit = (message: Message) => setEditing({messageId: message.id, text: message.content});
    return (
        <main className="chat" aria-label="Chat">
            <header className="chat-header">
                {headerStart}
                <h1 className="chat-title">{conversation.title}</h1>
                <PolicyControl policy={conversation.policy} cloud={cloud} onChange={onSetPolicy} />
                {headerEnd}
            </header>
            {conversation.incognito && (
                <p className="banner banner-info incognito-notice" role="note">
                    <IncognitoIcon /> <span className="banner-text"><strong>Incognito</strong>Nothing of this conversation is written to disk. It ends,
                        its memory scrubbed, when you delete it or quit (or the app locks).</span>
                </p>
            )}
            <div className="messages" ref={scroller} aria-live="polite" tabIndex={-1}>
                {messages.length === 0 && (
                    <div className="empty-state">
                        <h2>Say hello</h2>
                        <p>
                            {canSendToCloud
                                ? "Replies are generated on this machine unless a turn does not fit it or you use Send to cloud."
                                : "Replies are generated on this machine."} Press Enter to send, Shift+Enter for a new line.
                        </p>
                    </div>
                )}
                {messages.map((message) => {
                    const isLastReply = !generating && message.id === lastReply?.id;
                    return (
                        <MessageItem key={message.id} message={message} canRegenerate={isLastReply} canEdit={canEdit}
                            onRegenerate={() => onRegenerate("auto")} onEdit={() => edit(message)} onShowVersion={onShowVersion}
                            onRetryLocally={isLastReply && modelReady && message.status === "blocked" ? () => onRegenerate("local") : null}
                            onOpenCitation={onOpenCitation == null ? undefined : (citation) => onOpenCitation(conversation.id, citation)} />
                    );
                })}
                {generating && !(lastMessageIsReply(messages) && messages.at(-1)!.status === "streaming") && (
                    <p className="typing" role="status"><span className="typing-dots" aria-hidden="true"><span /><span /><span /></span> Waiting for the first token…</p>
                )}
            </div>
            <Composer key={conversation.id} conversationId={conversation.id} serverDraft={draft} editing={editing}
                disabled={!modelReady && !canSendToCloud} generating={generating} canSendToCloud={canSendToCloud}
                onSend={onSend} onStop={onStop} onSaveDraft={onSaveDraft} onUpload={onUpload} onDiscardUpload={onDiscardUpload}
                onResend={async (messageId, text, route) => {
                    setEditing(null);
                    return await onResend(messageId, text, route);
                }}
                onEditLast={() => {
                    if (lastPrompt == null || !canEdit)
                        return false;
                    edit(lastPrompt);
                    return true;
                }}
                onCancelEdit={() => setEditing(null)}
                placeholder={modelReady ? "Write a message…" : canSendToCloud ? "No local model: Send to cloud" : "Load a model to start chatting"} />
        </main>
    );
}

function lastMessageIsReply(messages: Message[]) {
    return messages.at(-1)?.role === "assistant";
}

import {useEffect, useRef} from "react";
import type {Message} from "../../../src/core/common/types.js";
import type {Conversation, ConversationPolicy, RouteRequest} from "../../../src/core/common/types.js";
import {cloudUsable, type CloudAccess} from "../cloudAccess.js";
import {Composer} from "./Composer.js";
import {MessageItem} from "./MessageItem.js";
import {PolicyControl} from "./PolicyControl.js";

/** The open conversation: its policy, its messages (following the stream) and the composer. */
export function ChatView({conversation, messages, generating, modelReady, cloud, onSend, onStop, onRegenerate, onSetPolicy}: {
    conversation: Conversation | null, messages: Message[], generating: boolean, modelReady: boolean, cloud: CloudAccess,
    onSend: (text: string, route: RouteRequest) => Promise<boolean>, onStop: () => void, onRegenerate: (route: RouteRequest) => void,
    onSetPolicy: (policy: ConversationPolicy) => void
}) {
    const scroller = useRef<HTMLDivElement>(null);
    const lastLength = messages.at(-1)?.content.length ?? 0;
    const lastStatus = messages.at(-1)?.status;
    useEffect(() => {
        const element = scroller.current;
        if (element != null)
            element.scrollTop = element.scrollHeight;
    }, [messages.length, lastLength, lastStatus]);

    if (conversation == null)
        return (
            <main className="chat chat-empty">
                <div className="empty-state">
                    <h2>No conversation open</h2>
                    <p>Start a new conversation from the sidebar. Each one gets its own context, scrubbed when its session ends.</p>
                </div>
            </main>
        );

    const lastReply = messages.findLast((message) => message.role === "assistant");
    const canSendToCloud = cloudUsable(conversation.policy, cloud);
    return (
        <main className="chat" aria-label="Chat">
            <header className="chat-header">
                <h1 className="chat-title">{conversation.title}</h1>
                <PolicyControl policy={conversation.policy} cloud={cloud} onChange={onSetPolicy} />
            </header>
            <div className="messages" ref={scroller} aria-live="polite">
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
                        <MessageItem key={message.id} message={message} canRegenerate={isLastReply} onRegenerate={() => onRegenerate("auto")}
                            onRetryLocally={isLastReply && modelReady && message.status === "blocked" ? () => onRegenerate("local") : null} />
                    );
                })}
            </div>
            <Composer disabled={!modelReady && !canSendToCloud} generating={generating} canSendToCloud={canSendToCloud}
                onSend={onSend} onStop={onStop}
                placeholder={modelReady ? "Write a message…" : canSendToCloud ? "No local model: Send to cloud" : "Load a model to start chatting"} />
        </main>
    );
}

import {useEffect, useRef} from "react";
import type {MessageView as Message} from "../../../src/core/common/api/index.js";
import type {Conversation} from "../../../src/core/common/types.js";
import {Composer} from "./Composer.js";
import {MessageItem} from "./MessageItem.js";

/** The open conversation: its messages (following the stream) and the composer. */
export function ChatView({conversation, messages, generating, modelReady, onSend, onStop, onRegenerate}: {
    conversation: Conversation | null, messages: Message[], generating: boolean, modelReady: boolean,
    onSend: (text: string) => Promise<boolean>, onStop: () => void, onRegenerate: () => void
}) {
    const scroller = useRef<HTMLDivElement>(null);
    const lastLength = messages.at(-1)?.content.length ?? 0;
    useEffect(() => {
        const element = scroller.current;
        if (element != null)
            element.scrollTop = element.scrollHeight;
    }, [messages.length, lastLength]);

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
    return (
        <main className="chat" aria-label="Chat">
            <header className="chat-header">
                <h1 className="chat-title">{conversation.title}</h1>
                <span className={`policy-chip policy-${conversation.policy}`}>{conversation.policy === "local" ? "Local only" : "Cloud allowed"}</span>
            </header>
            <div className="messages" ref={scroller} aria-live="polite">
                {messages.length === 0 && (
                    <div className="empty-state">
                        <h2>Say hello</h2>
                        <p>Replies are generated on this machine. Press Enter to send, Shift+Enter for a new line.</p>
                    </div>
                )}
                {messages.map((message) => (
                    <MessageItem key={message.id} message={message} onRegenerate={onRegenerate}
                        canRegenerate={!generating && message.id === lastReply?.id} />
                ))}
            </div>
            <Composer disabled={!modelReady} generating={generating} onSend={onSend} onStop={onStop}
                placeholder={modelReady ? "Write a message…" : "Load a model to start chatting"} />
        </main>
    );
}

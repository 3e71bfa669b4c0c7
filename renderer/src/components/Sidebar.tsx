import {useState} from "react";
import type {SearchHit} from "../../../src/core/common/types.js";
import type {ConversationListItem} from "../hooks/useConversationList.js";

/**
 * Conversations: new, search (titles and message text, by the core), open, rename, delete; each
 * marked local only or cloud allowed. A match in a message shows its snippet under the title.
 */
export function Sidebar({conversations, openId, query, onQueryChange, hits, onNew, onOpen, onRename, onDelete, onOpenSettings}: {
    conversations: ConversationListItem[], openId: string | null,
    query: string, onQueryChange: (query: string) => void, hits: SearchHit[] | null,
    onNew: () => void, onOpen: (id: string) => void, onRename: (id: string, title: string) => void,
    onDelete: (id: string) => void, onOpenSettings: () => void
}) {
    const [renaming, setRenaming] = useState<string | null>(null);
    const [draft, setDraft] = useState("");
    const snippets = new Map((hits ?? []).map((hit) => [hit.conversation.id, hit.snippet]));
    const shown = hits == null ? conversations : conversations.filter((conversation) => snippets.has(conversation.id));

    const commitRename = (id: string) => {
        if (draft.trim() !== "")
            onRename(id, draft.trim());
        setRenaming(null);
    };

    return (
        <nav className="sidebar" aria-label="Conversations">
            <div className="brand">
                <span className="brand-mark" aria-hidden="true">◇</span>
                <span className="brand-name">Cleanroom</span>
            </div>
            <button type="button" className="button button-primary button-wide" onClick={onNew}>New conversation</button>
            <input type="search" className="search" aria-label="Search conversations" placeholder="Search"
                value={query} onChange={(event) => onQueryChange(event.target.value)} />
            <ul className="conversation-list">
                {shown.map((conversation) => (
                    <li key={conversation.id} className={conversation.id === openId ? "conversation active" : "conversation"}>
                        {renaming === conversation.id
                            ? (
                                <form className="rename-form" onSubmit={(event) => {
                                    event.preventDefault();
                                    commitRename(conversation.id);
                                }}>
                                    <input aria-label="Conversation title" value={draft} autoFocus
                                        onChange={(event) => setDraft(event.target.value)} onBlur={() => commitRename(conversation.id)}
                                        onKeyDown={(event) => {
                                            if (event.key === "Escape")
                                                setRenaming(null);
                                        }} />
                                </form>
                            )
                            : (
                                <button type="button" className="conversation-open" aria-current={conversation.id === openId ? "page" : undefined}
                                    onClick={() => onOpen(conversation.id)}>
                                    <span className="conversation-title">{conversation.title}</span>
                                    {snippets.get(conversation.id) != null && <span className="conversation-snippet">{snippets.get(conversation.id)}</span>}
                                    <span className={`policy-chip small policy-${conversation.policy}`}>
                                        {conversation.policy === "local" ? "Local only" : "Cloud allowed"}
                                    </span>
                                </button>
                            )}
                        <div className="conversation-tools">
                            <button type="button" className="icon-button" aria-label={`Rename ${conversation.title}`} title="Rename"
                                onClick={() => {
                                    setDraft(conversation.title);
                                    setRenaming(conversation.id);
                                }}><PencilIcon /></button>
                            <button type="button" className="icon-button" aria-label={`Delete ${conversation.title}`} title="Delete"
                                onClick={() => {
                                    if (window.confirm(`Delete "${conversation.title}"? Its context is scrubbed and its messages and audit trail are removed.`))
                                        onDelete(conversation.id);
                                }}><TrashIcon /></button>
                        </div>
                    </li>
                ))}
                {shown.length === 0 && <li className="conversation-none">{conversations.length === 0 ? "No conversations yet." : "No match."}</li>}
            </ul>
            <button type="button" className="button button-ghost button-wide" onClick={onOpenSettings}>Settings</button>
        </nav>
    );
}

function PencilIcon() {
    return (
        <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round">
            <path d="M11 2.5l2.5 2.5L6 12.5 3 13l.5-3z" />
        </svg>
    );
}

function TrashIcon() {
    return (
        <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round">
            <path d="M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.5h5.8l.6-8.5" />
        </svg>
    );
}

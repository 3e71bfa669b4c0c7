import {useEffect, useRef, useState, type RefObject} from "react";
import type {SearchHit} from "../../../src/core/common/types.js";
import {groupByDate} from "../dateGroups.js";
import type {ConversationListItem} from "../hooks/useConversationList.js";
import {ExportMenu} from "./ExportMenu.js";

/** How long typing in the search box pauses before the core is asked. */
const searchDelayMs = 150;

/**
 * Conversations: new, search (titles and message text, by the core), grouped by date with the pinned
 * ones first; each can be opened, pinned, renamed, deleted (with Undo); all can be exported, and an
 * export imported back.
 */
export function Sidebar({conversations, openId, searchInput, onNew, onNewIncognito, onOpen, onRename, onDelete, onPin, onSearch, onExportAll, onImport,
    onOpenSettings, onOpenHelp}: {
    conversations: ConversationListItem[], openId: string | null, searchInput: RefObject<HTMLInputElement | null>,
    onNew: () => void, onNewIncognito: () => void, onOpen: (id: string) => void, onRename: (id: string, title: string) => void,
    onDelete: (id: string) => void, onPin: (id: string, pinned: boolean) => void,
    onSearch: (query: string) => Promise<SearchHit[]>, onExportAll: (format: "markdown" | "json") => void,
    onImport: (text: string) => void, onOpenSettings: () => void, onOpenHelp: () => void
}) {
    const [query, setQuery] = useState("");
    /** The hits shown, and the query they answer: while the box holds another, newer results are on their way (`aria-busy`). */
    const [found, setFound] = useState<{query: string, hits: SearchHit[]} | null>(null);
    const matches = found?.hits ?? null;
    const updating = found != null && found.query !== query.trim();
    const [renaming, setRenaming] = useState<string | null>(null);
    const [title, setTitle] = useState("");
    const fileInput = useRef<HTMLInputElement>(null);

    useEffect(() => {
        const trimmed = query.trim();
        if (trimmed === "") {
            setFound(null);
            return;
        }
        let current = true;
        const timer = setTimeout(() => {
            void onSearch(trimmed).then((hits) => {
                if (current)
                    setFound({query: trimmed, hits});
            });
        }, searchDelayMs);
        return () => {
            current = false;
            clearTimeout(timer);
        };
    }, [query, onSearch, conversations]);

    const commitRename = (id: string) => {
        if (title.trim() !== "")
            onRename(id, title.trim());
        setRenaming(null);
    };
    const snippets = new Map(matches?.map((hit) => [hit.conversation.id, hit.snippet]) ?? []);
    const shown = matches == null ? conversations : conversations.filter((conversation) => snippets.has(conversation.id));

    const item = (conversation: ConversationListItem) => (
        <li key={conversation.id} className={conversation.id === openId ? "conversation active" : "conversation"}>
            {renaming === conversation.id
                ? (
                    <form className="rename-form" onSubmit={(event) => {
                        event.preventDefault();
                        commitRename(conversation.id);
                    }}>
                        <input aria-label="Conversation title" value={title} autoFocus
                            onChange={(event) => setTitle(event.target.value)} onBlur={() => commitRename(conversation.id)}
                            onKeyDown={(event) => {
                                if (event.key === "Escape")
                                    setRenaming(null);
                            }} />
                    </form>
                )
                : (
                    <button type="button" className="conversation-open" aria-current={conversation.id === openId ? "page" : undefined}
                        onClick={() => onOpen(conversation.id)}>
                        <span className="conversation-title">{conversation.pinned && <span className="pin-mark" aria-label="Pinned">📌 </span>}{conversation.title}</span>
                        {snippets.get(conversation.id) != null && <span className="conversation-snippet">{snippets.get(conversation.id)}</span>}
                        {conversation.incognito && <span className="incognito-chip"><IncognitoIcon /> Incognito</span>}
                        <span className={`policy-chip small policy-${conversation.policy}`}>
                            {conversation.policy === "local" ? "Local only" : "Cloud allowed"}
                        </span>
                    </button>
                )}
            <div className="conversation-tools">
                <button type="button" className="icon-button" aria-label={`${conversation.pinned ? "Unpin" : "Pin"} ${conversation.title}`}
                    aria-pressed={conversation.pinned} title={conversation.pinned ? "Unpin" : "Pin"}
                    onClick={() => onPin(conversation.id, !conversation.pinned)}><PinIcon /></button>
                <button type="button" className="icon-button" aria-label={`Rename ${conversation.title}`} title="Rename"
                    onClick={() => {
                        setTitle(conversation.title);
                        setRenaming(conversation.id);
                    }}><PencilIcon /></button>
                <button type="button" className="icon-button" aria-label={`Delete ${conversation.title}`} title="Delete (can be undone for a few seconds)"
                    onClick={() => onDelete(conversation.id)}><TrashIcon /></button>
            </div>
        </li>
    );

    return (
        <nav className="sidebar" aria-label="Conversations">
            <div className="brand">
                <span className="brand-mark" aria-hidden="true">◇</span>
                <span className="brand-name">Cleanroom</span>
            </div>
            <button type="button" className="button button-primary button-wide" onClick={onNew} aria-keyshortcuts="Control+N">New conversation</button>
            <button type="button" className="button button-ghost button-wide" onClick={onNewIncognito} aria-keyshortcuts="Control+Shift+N"
                title="Never written to disk: it ends, scrubbed, when you delete it or quit">
                <IncognitoIcon /> New incognito conversation
            </button>
            <input ref={searchInput} type="search" className="search" aria-label="Search conversations" placeholder="Search titles and messages (Ctrl+K)"
                aria-keyshortcuts="Control+K" value={query} onChange={(event) => setQuery(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Escape" && query !== "") {
                        event.stopPropagation();
                        setQuery("");
                    }
                }} />
            <div className="conversation-groups">
                {matches != null
                    ? (
                        <section aria-label="Search results" aria-busy={updating}>
                            <h2 className="group-title">{shown.length === 1 ? "1 match" : `${shown.length} matches`}</h2>
                            <ul className="conversation-list">{shown.map(item)}</ul>
                        </section>
                    )
                    : groupByDate(conversations, Date.now()).map((group) => (
                        <section key={group.name} aria-label={group.name}>
                            <h2 className="group-title">{group.name}</h2>
                            <ul className="conversation-list">{group.items.map(item)}</ul>
                        </section>
                    ))}
                {shown.length === 0 && <p className="conversation-none">{conversations.length === 0 ? "No conversations yet." : matches == null ? "" : "No match."}</p>}
            </div>
            <div className="sidebar-footer">
                <ExportMenu label="Export all" onExport={onExportAll} />
                <button type="button" className="button button-ghost button-small" onClick={() => fileInput.current?.click()}>Import…</button>
                <input ref={fileInput} type="file" accept="application/json,.json" className="visually-hidden" aria-label="Import conversations from a JSON export"
                    tabIndex={-1} onChange={(event) => {
                        const file = event.target.files?.[0];
                        event.target.value = "";
                        if (file != null)
                            void file.text().then(onImport);
                    }} />
            </div>
            <div className="sidebar-footer">
                <button type="button" className="button button-ghost" onClick={onOpenSettings} aria-keyshortcuts="Control+,">Settings</button>
                <button type="button" className="button button-ghost" onClick={onOpenHelp} aria-keyshortcuts="Control+/">Shortcuts</button>
            </div>
        </nav>
    );
}

export function IncognitoIcon() {
    return (
        <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round">
            <path d="M2 8.5h12M4 8.5l1.2-5h5.6l1.2 5" />
            <circle cx="5" cy="11.5" r="1.8" />
            <circle cx="11" cy="11.5" r="1.8" />
            <path d="M6.8 11.5h2.4" />
        </svg>
    );
}

function PinIcon() {
    return (
        <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round">
            <path d="M6 2.5h4l-.5 4 2 2v1h-7v-1l2-2zM8 9.5V14" />
        </svg>
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

import crypto from "node:crypto";
import type Database from "better-sqlite3-multiple-ciphers";
import {CleanroomError, InvalidInputError} from "../../common/errors.js";
import {isWellFormed} from "../../common/titleFromText.js";
import {AuditLog} from "../audit/AuditLog.js";
import {DeletionPurger, type DeletionPurgerOptions, type PurgeState} from "./DeletionPurger.js";
import {
    ConversationIdSchema, ConversationSettingsSchema, type CloudVerdict, type Conversation, type ConversationId, type ConversationPolicy, type ConversationSettings,
    type ConversationSummary, type Message, type SearchHit, type MessageRole, type MessageStatus, type Route
} from "../../common/types.js";

type ConversationRow = {id: string, title: string, policy: ConversationPolicy, settings_json: string, created_at: number, updated_at: number};
type MessageRow = {
    id: number, conversation_id: string, role: MessageRole, content: string, status: MessageStatus,
    route: Route | null, route_reason: string | null, tokens: number | null, verdict_json: string | null,
    created_at: number, updated_at: number
};

export type NewConversation = {
    id?: ConversationId,
    title?: string,
    policy?: ConversationPolicy,
    settings?: Partial<ConversationSettings>
};

export type NewMessage = {
    role: MessageRole,
    content: string,
    status: MessageStatus,
    route?: Route | null,
    routeReason?: string | null,
    tokens?: number | null
};

export type ConversationStoreOptions = {
    /** Where the purge of deleted text is recorded. Defaults to a new `AuditLog` on the same database. */
    audit?: AuditLog,
    /** Passed to the `DeletionPurger`. */
    purge?: DeletionPurgerOptions
};

/** What a deletion did: the rows are always gone; `purge` says whether their text is gone from disk yet. */
export type DeletionResult = {purge: PurgeState};

/** Conversations and their messages in SQLite. */
export class ConversationStore {
    /** Finishes the purge of deleted text from the database file and WAL (see `DeletionPurger`). */
    public readonly purger: DeletionPurger;
    private readonly _db: Database.Database;

    public constructor(db: Database.Database, {audit, purge}: ConversationStoreOptions = {}) {
        this._db = db;
        this.purger = new DeletionPurger(db, audit ?? new AuditLog(db), purge);
    }

    public create({id, title, policy = "local", settings = {}}: NewConversation = {}): Conversation {
        if (title != null)
            checkTitle(title);
        const checkedId = id == null ? undefined : ConversationIdSchema.safeParse(id);
        if (checkedId?.success === false)
            throw new InvalidInputError("conversations.create", checkedId.error.issues.map((issue) => `id: ${issue.message}`));
        const now = Date.now();
        const conversation: Conversation = {
            id: id ?? crypto.randomUUID(),
            title: title ?? "New conversation",
            policy,
            settings: ConversationSettingsSchema.parse(settings),
            createdAt: now,
            updatedAt: now
        };
        this._db.prepare(
            "INSERT INTO conversations (id, title, policy, settings_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
        ).run(conversation.id, conversation.title, conversation.policy, JSON.stringify(conversation.settings), now, now);
        this.purger.afterWrite();
        return conversation;
    }

    public find(id: ConversationId): Conversation | undefined {
        const row = this._db.prepare("SELECT * FROM conversations WHERE id = ?").get(id) as ConversationRow | undefined;
        return row == null ? undefined : conversationFromRow(row);
    }

    public get(id: ConversationId): Conversation {
        const conversation = this.find(id);
        if (conversation == null)
            throw new CleanroomError("CONVERSATION_NOT_FOUND", `No conversation with id ${id}.`, {conversationId: id});

        return conversation;
    }

    public list(): ConversationSummary[] {
        const rows = this._db.prepare(`
            SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count
            FROM conversations c ORDER BY c.updated_at DESC, c.id
        `).all() as Array<ConversationRow & {message_count: number}>;
        return rows.map((row) => ({...conversationFromRow(row), messageCount: row.message_count}));
    }

    /**
     * Conversations whose title or messages contain every word of `text` (the last one also as a
     * prefix), newest first: full-text search (FTS5) over message content, inside the database.
     * Words are matched as words, never as FTS5 syntax.
     */
    public search(text: string, limit = 50): SearchHit[] {
        const words = text.normalize("NFC").split(/\s+/).filter((word) => word !== "");
        if (words.length === 0)
            return [];
        // Only words with a letter or digit reach FTS5 (a word of punctuation alone has no token, and an empty prefix is a syntax error).
        const indexed = words.map((word) => word.replaceAll("\0", "")).filter((word) => /[\p{L}\p{N}]/u.test(word));
        const query = indexed.map((word, index) => `"${word.replaceAll('"', '""')}"${index === indexed.length - 1 ? "*" : ""}`).join(" ");
        let rows: Array<{conversation_id: string, message_id: number, snippet: string}> = [];
        try {
            // The newest matching message of each conversation (FTS5's snippet cannot run inside an aggregate).
            rows = query === "" ? [] : this._db.prepare(`
                SELECT m.conversation_id AS conversation_id, m.id AS message_id, snippet(messages_fts, 0, '[', ']', '…', 12) AS snippet
                FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                WHERE messages_fts MATCH ?
                ORDER BY m.id DESC
                LIMIT 2000
            `).all(query) as typeof rows;
        } catch (error) {
            // A query FTS5 still cannot parse matches no message; every word was quoted, so nothing else can go wrong here.
            if (!(error instanceof Error && error.message.startsWith("fts5:")))
                throw error;
        }
        const byMessage = new Map<string, (typeof rows)[number]>();
        for (const row of rows)
            if (!byMessage.has(row.conversation_id))
                byMessage.set(row.conversation_id, row);
        const lowered = words.map((word) => word.toLowerCase());
        const hits: SearchHit[] = [];
        for (const conversation of this.list()) {
            const titleMatch = lowered.every((word) => conversation.title.toLowerCase().includes(word));
            const row = byMessage.get(conversation.id);
            if (titleMatch)
                hits.push({conversation, matchedIn: "title", messageId: null, snippet: null});
            else if (row != null)
                hits.push({conversation, matchedIn: "message", messageId: row.message_id, snippet: row.snippet});
        }
        return hits.slice(0, limit);
    }

    public update(id: ConversationId, changes: {title?: string, policy?: ConversationPolicy, settings?: Partial<ConversationSettings>}): Conversation {
        if (changes.title != null)
            checkTitle(changes.title);
        const current = this.get(id);
        const next: Conversation = {
            ...current,
            title: changes.title ?? current.title,
            policy: changes.policy ?? current.policy,
            settings: ConversationSettingsSchema.parse({...current.settings, ...changes.settings}),
            updatedAt: Date.now()
        };
        this._db.prepare("UPDATE conversations SET title = ?, policy = ?, settings_json = ?, updated_at = ? WHERE id = ?")
            .run(next.title, next.policy, JSON.stringify(next.settings), next.updatedAt, id);
        this.purger.afterWrite();
        return next;
    }

    /**
     * Removes the conversation, its messages and its audit trail, then checkpoints the WAL so no
     * copy of them lingers there. `purge: "pending"` when another connection's read snapshot kept
     * the checkpoint from finishing: the purger records it and finishes it once that reader is done.
     */
    public delete(id: ConversationId): DeletionResult {
        this.get(id);
        this._db.transaction(() => {
            this._db.prepare("DELETE FROM messages WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM audit_events WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM conversations WHERE id = ?").run(id);
        })();
        return {purge: this.purger.afterDeletion()};
    }

    public appendMessage(conversationId: ConversationId, message: NewMessage): Message {
        const now = Date.now();
        const result = this._db.prepare(`
            INSERT INTO messages (conversation_id, role, content, status, route, route_reason, tokens, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        `).run(conversationId, message.role, message.content, message.status, message.route ?? null,
            message.routeReason ?? null, message.tokens ?? null, now, now);
        this._db.prepare("UPDATE conversations SET updated_at = ? WHERE id = ?").run(now, conversationId);
        this.purger.afterWrite();
        return this.getMessage(Number(result.lastInsertRowid));
    }

    /** The user's message and the (empty, streaming) reply in one commit: a crash never leaves one without the other. */
    public appendTurn(conversationId: ConversationId, userText: string, reply: {route: Route, routeReason: string}): {user: Message, reply: Message} {
        return this._db.transaction(() => ({
            user: this.appendMessage(conversationId, {role: "user", content: userText, status: "complete"}),
            reply: this.appendMessage(conversationId, {role: "assistant", content: "", status: "streaming", ...reply})
        }))();
    }

    /** Saves a reply as it grows; `status` stays `streaming` until `finishMessage`. */
    public updateMessageContent(messageId: number, content: string, tokens: number): void {
        this._db.prepare("UPDATE messages SET content = ?, tokens = ?, updated_at = ? WHERE id = ?").run(content, tokens, Date.now(), messageId);
    }

    public finishMessage(messageId: number, update: {content: string, status: MessageStatus, tokens?: number | null, verdict?: CloudVerdict | null}): Message {
        this._db.prepare("UPDATE messages SET content = ?, status = ?, tokens = COALESCE(?, tokens), verdict_json = COALESCE(?, verdict_json), updated_at = ? WHERE id = ?")
            .run(update.content, update.status, update.tokens ?? null, update.verdict == null ? null : JSON.stringify(update.verdict), Date.now(), messageId);
        this.purger.afterWrite();
        return this.getMessage(messageId);
    }

    public deleteMessage(messageId: number): void {
        this._db.prepare("DELETE FROM messages WHERE id = ?").run(messageId);
        this.purger.afterWrite();
    }

    public getMessage(messageId: number): Message {
        const row = this._db.prepare("SELECT * FROM messages WHERE id = ?").get(messageId) as MessageRow | undefined;
        if (row == null)
            throw new CleanroomError("INVALID_INPUT", `No message with id ${messageId}.`, {messageId});

        return messageFromRow(row);
    }

    public messages(conversationId: ConversationId): Message[] {
        const rows = this._db.prepare("SELECT * FROM messages WHERE conversation_id = ? ORDER BY id").all(conversationId) as MessageRow[];
        return rows.map(messageFromRow);
    }
}

/** SQLite would store a lone surrogate as bytes that are not UTF-8: such a title is refused, not written. */
function checkTitle(title: string) {
    if (!isWellFormed(title))
        throw new InvalidInputError("the conversation title", ["it contains half of a character (a lone UTF-16 surrogate), which cannot be stored as UTF-8"]);
}

function conversationFromRow(row: ConversationRow): Conversation {
    return {
        id: row.id,
        title: row.title,
        policy: row.policy,
        settings: ConversationSettingsSchema.parse(JSON.parse(row.settings_json)),
        createdAt: row.created_at,
        updatedAt: row.updated_at
    };
}

function messageFromRow(row: MessageRow): Message {
    return {
        id: row.id,
        conversationId: row.conversation_id,
        role: row.role,
        content: row.content,
        status: row.status,
        route: row.route,
        routeReason: row.route_reason,
        tokens: row.tokens,
        verdict: row.verdict_json == null ? null : JSON.parse(row.verdict_json),
        createdAt: row.created_at,
        updatedAt: row.updated_at
    };
}

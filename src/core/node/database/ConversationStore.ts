import crypto from "node:crypto";
import type Database from "better-sqlite3-multiple-ciphers";
import {describeZodIssues} from "../../common/describeZodIssues.js";
import {CleanroomError, InvalidInputError} from "../../common/errors.js";
import {isWellFormed} from "../../common/titleFromText.js";
import {AuditLog} from "../audit/AuditLog.js";
import {ReplySources} from "../documents/ReplySources.js";
import {processActivityClock, type ActivityClock} from "./ActivityClock.js";
import {DeletionPurger, type DeletionPurgerOptions, type PurgeState} from "./DeletionPurger.js";
import {
    ConversationIdSchema, ConversationSettingsSchema, type CloudVerdict, type Conversation, type ConversationId, type ConversationPolicy, type ConversationSettings,
    type ConversationSummary, type Message, type MessageAttachment, type SearchHit, type MessageRole, type MessageStatus, type Route
} from "../../common/types.js";

type ConversationRow = {
    id: string, title: string, policy: ConversationPolicy, settings_json: string, created_at: number, updated_at: number,
    pinned: number, trashed_at: number | null
};
type MessageRow = {
    id: number, conversation_id: string, role: MessageRole, content: string, status: MessageStatus,
    route: Route | null, route_reason: string | null, tokens: number | null, verdict_json: string | null,
    created_at: number, updated_at: number, tokens_per_second: number | null, parent_id: number | null, active: number
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
    purge?: DeletionPurgerOptions,
    /** Marks every conversation of this store incognito (a store on an in-memory database). */
    incognito?: boolean,
    /** Where conversations' activity times come from; defaults to the one clock of the process. */
    clock?: ActivityClock
};

/** What a deletion did: the rows are always gone; `purge` says whether their text is gone from disk yet. */
export type DeletionResult = {purge: PurgeState};

/** Conversations and their messages in SQLite. */
export class ConversationStore {
    /** Finishes the purge of deleted text from the database file and WAL (see `DeletionPurger`). */
    public readonly purger: DeletionPurger;
    private readonly _db: Database.Database;
    private readonly _incognito: boolean;
    private readonly _clock: ActivityClock;
    private readonly _replySources: ReplySources;

    public constructor(db: Database.Database, {audit, purge, incognito = false, clock = processActivityClock}: ConversationStoreOptions = {}) {
        this._db = db;
        this._incognito = incognito;
        this._clock = clock;
        this._replySources = new ReplySources(db);
        this.purger = new DeletionPurger(db, audit ?? new AuditLog(db), purge);
    }

    public create(input: NewConversation = {}): Conversation {
        const {createdAt, updatedAt, ...fields} = this.preview(input);
        const {time} = this._db.prepare(`
            INSERT INTO conversations (id, title, policy, settings_json, created_at, updated_at)
            SELECT @id, @title, @policy, @settings, time, time FROM (SELECT ${nextActivityTime} AS time)
            RETURNING updated_at AS time
        `).get({id: fields.id, title: fields.title, policy: fields.policy, settings: JSON.stringify(fields.settings), now: this._clock.next()}) as {time: number};
        this._clock.observe(time);
        this.purger.afterWrite();
        return {...fields, createdAt: time, updatedAt: time};
    }

    /**
     * The conversation `create` would make of `input` (checked the same way), not stored: what a
     * turn is prepared against before it may create it. Its times are those of now.
     */
    public preview({id, title, policy = "local", settings = {}}: NewConversation = {}): Conversation {
        if (title != null)
            checkTitle(title);
        const checkedId = id == null ? undefined : ConversationIdSchema.safeParse(id);
        if (checkedId?.success === false)
            throw new InvalidInputError("conversations.create", describeZodIssues(checkedId.error.issues, {whole: "id"}));
        const now = Date.now();
        return {
            id: id ?? crypto.randomUUID(),
            title: title ?? "New conversation",
            policy,
            pinned: false,
            settings: ConversationSettingsSchema.parse(settings),
            incognito: this._incognito,
            createdAt: now,
            updatedAt: now
        };
    }

    public find(id: ConversationId): Conversation | undefined {
        const row = this._db.prepare("SELECT * FROM conversations WHERE id = ?").get(id) as ConversationRow | undefined;
        return row == null ? undefined : conversationFromRow(row, this._incognito);
    }

    public get(id: ConversationId): Conversation {
        const conversation = this.find(id);
        if (conversation == null)
            throw new CleanroomError("CONVERSATION_NOT_FOUND", `No conversation with id ${id}.`, {conversationId: id});

        return conversation;
    }

    /** Conversations not in the trash (with `includeTrashed`, those too): pinned first, then the most recently updated. */
    public list({includeTrashed = false}: {includeTrashed?: boolean} = {}): ConversationSummary[] {
        const rows = this._db.prepare(`
            SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.active = 1) AS message_count,
                EXISTS (SELECT 1 FROM drafts d WHERE d.conversation_id = c.id) AS has_draft
            FROM conversations c WHERE c.trashed_at IS NULL OR @includeTrashed = 1 ORDER BY c.pinned DESC, c.updated_at DESC, c.id
        `).all({includeTrashed: includeTrashed ? 1 : 0}) as Array<ConversationRow & {message_count: number, has_draft: number}>;
        return rows.map((row) => ({...conversationFromRow(row, this._incognito), messageCount: row.message_count, hasDraft: row.has_draft === 1}));
    }

    /** Ids of conversations in the trash (deleted, still undoable), oldest first. */
    public trashed(): ConversationId[] {
        return (this._db.prepare("SELECT id FROM conversations WHERE trashed_at IS NOT NULL ORDER BY trashed_at").all() as Array<{id: string}>)
            .map((row) => row.id);
    }

    /** Puts the conversation in the trash (hidden from the list, kept with its id until deleted) or takes it out. */
    public setTrashed(id: ConversationId, trashed: boolean): void {
        this.get(id);
        this._db.prepare("UPDATE conversations SET trashed_at = ? WHERE id = ?").run(trashed ? Date.now() : null, id);
    }

    public setPinned(id: ConversationId, pinned: boolean): Conversation {
        this.get(id);
        this._db.prepare("UPDATE conversations SET pinned = ? WHERE id = ?").run(pinned ? 1 : 0, id);
        return this.get(id);
    }

    /** The composer's unsent text of the conversation; empty when there is none. */
    public draft(id: ConversationId): string {
        const row = this._db.prepare("SELECT text FROM drafts WHERE conversation_id = ?").get(id) as {text: string} | undefined;
        return row?.text ?? "";
    }

    /** Keeps the composer's unsent text; an empty text removes the draft. */
    public setDraft(id: ConversationId, text: string): void {
        this.get(id);
        if (text === "")
            this._db.prepare("DELETE FROM drafts WHERE conversation_id = ?").run(id);
        else
            this._db.prepare(`INSERT INTO drafts (conversation_id, text, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`).run(id, text, Date.now());
    }

    /**
     * Conversations (not in the trash) whose title or shown messages (the active branch) contain every
     * word of `text` (the last one also as a prefix), pinned first, then newest: full-text search (FTS5) over message content, inside the database.
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
                WHERE messages_fts MATCH ? AND m.active = 1
                ORDER BY m.id DESC
                LIMIT 2000
            `).all(query) as typeof rows;
            // Words inside the documents a shown message brought (#23): the hit points at that message.
            rows.push(...this._db.prepare(`
                SELECT a.conversation_id AS conversation_id, a.message_id AS message_id, snippet(attachment_chunks_fts, 0, '[', ']', '…', 12) AS snippet
                FROM attachment_chunks_fts JOIN attachment_chunks c ON c.id = attachment_chunks_fts.rowid
                JOIN attachments a ON a.id = c.attachment_id JOIN messages m ON m.id = a.message_id
                WHERE attachment_chunks_fts MATCH ? AND m.active = 1
                ORDER BY a.message_id DESC
                LIMIT 2000
            `).all(query) as typeof rows);
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
        const next = {
            ...current,
            title: changes.title ?? current.title,
            policy: changes.policy ?? current.policy,
            settings: ConversationSettingsSchema.parse({...current.settings, ...changes.settings})
        };
        this._db.prepare("UPDATE conversations SET title = @title, policy = @policy, settings_json = @settings WHERE id = @id")
            .run({id, title: next.title, policy: next.policy, settings: JSON.stringify(next.settings)});
        const updatedAt = this._touch(id);
        this.purger.afterWrite();
        return {...next, updatedAt};
    }

    /**
     * Removes the conversation, its messages, their documents and its audit trail, then checkpoints the WAL so no
     * copy of them lingers there. `purge: "pending"` when another connection's read snapshot kept
     * the checkpoint from finishing: the purger records it and finishes it once that reader is done.
     */
    public delete(id: ConversationId): DeletionResult {
        this.get(id);
        this._db.transaction(() => {
            this._db.prepare("DELETE FROM attachment_chunk_vectors WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM attachment_chunks WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM attachments WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM messages WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM drafts WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM audit_events WHERE conversation_id = ?").run(id);
            this._db.prepare("DELETE FROM conversations WHERE id = ?").run(id);
        })();
        return {purge: this.purger.afterDeletion()};
    }

    /** Marks the conversation active now (see `nextActivityTime`); its new `updatedAt`. */
    private _touch(id: ConversationId): number {
        const row = this._db.prepare(`UPDATE conversations SET updated_at = ${nextActivityTime} WHERE id = @id RETURNING updated_at AS time`)
            .get({id, now: this._clock.next()}) as {time: number} | undefined;
        if (row == null)
            throw new CleanroomError("CONVERSATION_NOT_FOUND", `No conversation with id ${id}.`, {conversationId: id});
        this._clock.observe(row.time);
        return row.time;
    }

    /** Appends to the shown branch: the new message's parent is the conversation's last active message. */
    public appendMessage(conversationId: ConversationId, message: NewMessage): Message {
        const now = this._touch(conversationId);
        const parent = this._db.prepare("SELECT MAX(id) AS id FROM messages WHERE conversation_id = ? AND active = 1").get(conversationId) as {id: number | null};
        const result = this._db.prepare(`
            INSERT INTO messages (conversation_id, role, content, status, route, route_reason, tokens, created_at, updated_at, parent_id, active)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
        `).run(conversationId, message.role, message.content, message.status, message.route ?? null,
            message.routeReason ?? null, message.tokens ?? null, now, now, parent.id);
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

    public finishMessage(messageId: number, update: {
        content: string, status: MessageStatus, tokens?: number | null, verdict?: CloudVerdict | null, tokensPerSecond?: number | null
    }): Message {
        this._db.prepare(`UPDATE messages SET content = ?, status = ?, tokens = COALESCE(?, tokens), verdict_json = COALESCE(?, verdict_json),
            tokens_per_second = COALESCE(?, tokens_per_second), updated_at = ? WHERE id = ?`)
            .run(update.content, update.status, update.tokens ?? null, update.verdict == null ? null : JSON.stringify(update.verdict),
                update.tokensPerSecond ?? null, Date.now(), messageId);
        this.purger.afterWrite();
        return this.getMessage(messageId);
    }

    public deleteMessage(messageId: number): void {
        this._db.prepare("DELETE FROM messages WHERE id = ?").run(messageId);
        this.purger.afterWrite();
    }

    /** The message; MESSAGE_NOT_FOUND when there is none with this id (in `conversationId`, when given). */
    public getMessage(messageId: number, conversationId?: ConversationId): Message {
        const row = this._db.prepare("SELECT * FROM messages WHERE id = ?").get(messageId) as MessageRow | undefined;
        if (row == null || (conversationId != null && row.conversation_id !== conversationId))
            throw new CleanroomError("MESSAGE_NOT_FOUND", conversationId != null
                ? `Conversation ${conversationId} holds no message with id ${messageId}.`
                : `No message with id ${messageId}.`, {messageId, ...(conversationId != null ? {conversationId} : {})});

        return messageFromRow(row);
    }

    /**
     * The conversation's shown branch, oldest first: what the user sees and the model is given. Each
     * message says which of its versions it is (`branch`), when an edit made more than one.
     */
    public messages(conversationId: ConversationId): Message[] {
        const rows = this._db.prepare("SELECT * FROM messages WHERE conversation_id = ? AND active = 1 ORDER BY id").all(conversationId) as MessageRow[];
        const versions = new Map<string, number[]>();
        for (const {id, parent_id: parent, role} of this._db.prepare("SELECT id, parent_id, role FROM messages WHERE conversation_id = ? ORDER BY id")
            .all(conversationId) as Array<{id: number, parent_id: number | null, role: string}>) {
            const key = `${parent ?? ""}:${role}`;
            versions.set(key, [...versions.get(key) ?? [], id]);
        }
        const attachments = this._attachmentsByMessage(conversationId);
        const citations = this._replySources.citationsByMessage(conversationId);
        return rows.map((row) => {
            const siblings = versions.get(`${row.parent_id ?? ""}:${row.role}`) ?? [row.id];
            const index = siblings.indexOf(row.id);
            const attached = attachments.get(row.id);
            return {
                ...messageFromRow(row),
                ...attached != null ? {attachments: attached} : {},
                ...citations.has(row.id) ? {citations: citations.get(row.id)} : {},
                branch: siblings.length < 2 ? null : {
                    index, count: siblings.length, previousId: siblings[index - 1] ?? null, nextId: siblings[index + 1] ?? null
                }
            };
        });
    }

    /** The text of every document of the conversation (#23): fingerprinted for other conversations' cloud turns. */
    public documentTexts(conversationId: ConversationId): string[] {
        return (this._db.prepare("SELECT text FROM attachments WHERE conversation_id = ? ORDER BY id").all(conversationId) as Array<{text: string}>)
            .map((row) => row.text);
    }

    /** What each message of the conversation brought (#23): its documents, never their text. */
    private _attachmentsByMessage(conversationId: ConversationId): Map<number, MessageAttachment[]> {
        const byMessage = new Map<number, MessageAttachment[]>();
        const rows = this._db.prepare(`SELECT id, message_id, name, format, bytes, pages, tokens, mode FROM attachments
            WHERE conversation_id = ? ORDER BY id`).all(conversationId) as Array<MessageAttachment & {message_id: number}>;
        for (const {message_id: messageId, ...attachment} of rows)
            byMessage.set(messageId, [...byMessage.get(messageId) ?? [], attachment]);
        return byMessage;
    }

    /**
     * Takes `messageId` and everything after it off the shown branch (kept, as an older version), so that
     * an edited message can be appended in its place. Returns what was taken off, for `restoreBranch`.
     */
    public branchBefore(messageId: number): number[] {
        const message = this.getMessage(messageId);
        const row = this._db.prepare("SELECT active FROM messages WHERE id = ?").get(messageId) as {active: number};
        if (row.active !== 1)
            throw new InvalidInputError("the message", ["it is not on the conversation's shown branch"]);
        const ids = (this._db.prepare("SELECT id FROM messages WHERE conversation_id = ? AND active = 1 AND id >= ? ORDER BY id")
            .all(message.conversationId, messageId) as Array<{id: number}>).map((taken) => taken.id);
        this._db.prepare(`UPDATE messages SET active = 0 WHERE id IN (${ids.map(() => "?").join(", ")})`).run(...ids);
        return ids;
    }

    /** Puts messages taken off by `branchBefore` back on the shown branch (an edit that could not be sent). */
    public restoreBranch(ids: number[]): void {
        if (ids.length > 0)
            this._db.prepare(`UPDATE messages SET active = 1 WHERE id IN (${ids.map(() => "?").join(", ")})`).run(...ids);
    }

    /**
     * Shows another version of a message (one an edit kept): the shown branch from that message's
     * parent on becomes that version and, after it, its most recent continuation.
     */
    public showVersion(messageId: number): void {
        const target = this._db.prepare("SELECT * FROM messages WHERE id = ?").get(messageId) as MessageRow | undefined;
        if (target == null)
            throw new CleanroomError("INVALID_INPUT", `No message with id ${messageId}.`, {messageId});
        if (target.active === 1)
            return;
        this._db.transaction(() => {
            const shown = this._db.prepare("SELECT id FROM messages WHERE conversation_id = ? AND active = 1 AND parent_id IS ? AND role = ?")
                .get(target.conversation_id, target.parent_id, target.role) as {id: number} | undefined;
            if (shown != null)
                this._db.prepare("UPDATE messages SET active = 0 WHERE conversation_id = ? AND active = 1 AND id >= ?").run(target.conversation_id, shown.id);
            for (let id: number | undefined = target.id; id != null;) {
                this._db.prepare("UPDATE messages SET active = 1 WHERE id = ?").run(id);
                id = (this._db.prepare("SELECT MAX(id) AS id FROM messages WHERE parent_id = ?").get(id) as {id: number | null}).id ?? undefined;
            }
        })();
    }
}

/**
 * SQL for the time of a conversation's new activity: `@now` (from the process's `ActivityClock`), or
 * just after the newest activity in the file when another process wrote one as late. One statement
 * reads and writes it, so two processes writing in the same millisecond still get distinct times.
 */
const nextActivityTime = "MAX(@now, COALESCE((SELECT MAX(updated_at) FROM conversations), 0) + 1)";

/** SQLite would store a lone surrogate as bytes that are not UTF-8: such a title is refused, not written. */
function checkTitle(title: string) {
    if (!isWellFormed(title))
        throw new InvalidInputError("the conversation title", ["it contains half of a character (a lone UTF-16 surrogate), which cannot be stored as UTF-8"]);
}

function conversationFromRow(row: ConversationRow, incognito: boolean): Conversation {
    return {
        id: row.id,
        title: row.title,
        policy: row.policy,
        pinned: row.pinned === 1,
        settings: ConversationSettingsSchema.parse(JSON.parse(row.settings_json)),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        incognito
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
        tokensPerSecond: row.tokens_per_second,
        verdict: row.verdict_json == null ? null : JSON.parse(row.verdict_json),
        createdAt: row.created_at,
        updatedAt: row.updated_at
    };
}

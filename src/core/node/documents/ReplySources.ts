import type Database from "better-sqlite3-multiple-ciphers";
import type {Citation, CitedDocument, CitedPassage, IsolationDocument} from "../../common/api/documentSchemas.js";
import {CleanroomError} from "../../common/errors.js";
import type {ConversationId} from "../../common/types.js";
import {pagesFromText} from "./documentPrompt.js";

/** A document (whole: `chunkId` null) or one of its chunks that a reply was given; `cited` when it is shown under the reply. */
export type ReplySource = {attachmentId: number, chunkId: number | null, cited: boolean};

/** Where a reply was made: the local model, or a cloud endpoint (its host). */
export type ReplyRoute = {route: "local"} | {route: "cloud", endpointHost: string};

/**
 * What each reply was given of its conversation's documents (#23 items 4 and 7), in the conversation
 * store's database: the citations under a reply, the cited text read back for one conversation only,
 * and what of each document went to the local model and to the cloud.
 */
export class ReplySources {
    private readonly _db: Database.Database;

    public constructor(db: Database.Database) {
        this._db = db;
    }

    /** Records what the reply `messageId` was given (call it in the transaction that stores the turn). */
    public record(conversationId: ConversationId, messageId: number, where: ReplyRoute, sources: readonly ReplySource[]): void {
        const insert = this._db.prepare(`INSERT INTO reply_sources (conversation_id, message_id, attachment_id, chunk_id, route, endpoint_host, cited, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
        const at = Date.now();
        for (const {attachmentId, chunkId, cited} of sources)
            insert.run(conversationId, messageId, attachmentId, chunkId, where.route, where.route === "cloud" ? where.endpointHost : null, cited ? 1 : 0, at);
    }

    /** The stored chunk of the conversation's document `attachmentId` with this page, lines and text (a passage retrieved before it was stored). */
    public chunkIdOf(conversationId: ConversationId, attachmentId: number, passage: {page: number, startLine: number, endLine: number, text: string}): number | null {
        const row = this._db.prepare(`SELECT id FROM attachment_chunks
            WHERE conversation_id = ? AND attachment_id = ? AND page = ? AND start_line = ? AND end_line = ? AND text = ? ORDER BY id LIMIT 1`)
            .get(conversationId, attachmentId, passage.page, passage.startLine, passage.endLine, passage.text) as {id: number} | undefined;
        return row?.id ?? null;
    }

    /** The citations under each reply of the conversation, by message id, in the order the reply was given them. */
    public citationsByMessage(conversationId: ConversationId): Map<number, Citation[]> {
        type Row = {message_id: number, attachment_id: number, chunk_id: number | null, name: string, pages: number,
            page: number | null, start_line: number | null, end_line: number | null};
        const rows = this._db.prepare(`SELECT s.message_id, s.attachment_id, s.chunk_id, a.name, a.pages, c.page, c.start_line, c.end_line
            FROM reply_sources s JOIN attachments a ON a.id = s.attachment_id LEFT JOIN attachment_chunks c ON c.id = s.chunk_id
            WHERE s.conversation_id = ? AND s.cited = 1 ORDER BY s.message_id, s.id`).all(conversationId) as Row[];
        const byMessage = new Map<number, Citation[]>();
        for (const row of rows) {
            const citation: Citation = row.chunk_id == null
                ? {kind: "document", attachmentId: row.attachment_id, name: row.name, pages: row.pages}
                : {kind: "passage", chunkId: row.chunk_id, attachmentId: row.attachment_id, name: row.name,
                    page: row.page!, startLine: row.start_line!, endLine: row.end_line!};
            byMessage.set(row.message_id, [...byMessage.get(row.message_id) ?? [], citation]);
        }
        return byMessage;
    }

    /** A chunk of the conversation's documents; PASSAGE_NOT_FOUND when the conversation has none with this id (another's included). */
    public passage(conversationId: ConversationId, chunkId: number): CitedPassage {
        const row = this._db.prepare(`SELECT c.id, c.attachment_id, a.name, c.page, c.start_line, c.end_line, c.text
            FROM attachment_chunks c JOIN attachments a ON a.id = c.attachment_id
            WHERE c.id = ? AND c.conversation_id = ? AND a.conversation_id = ?`).get(chunkId, conversationId, conversationId) as {
            id: number, attachment_id: number, name: string, page: number, start_line: number, end_line: number, text: string
        } | undefined;
        if (row == null)
            throw new CleanroomError("PASSAGE_NOT_FOUND", `Conversation ${conversationId} holds no passage with id ${chunkId}.`, {conversationId, chunkId});
        return {chunkId: row.id, attachmentId: row.attachment_id, name: row.name, page: row.page, startLine: row.start_line, endLine: row.end_line, text: row.text};
    }

    /** A document of the conversation, page by page; PASSAGE_NOT_FOUND when the conversation has none with this id (another's included). */
    public document(conversationId: ConversationId, attachmentId: number): CitedDocument {
        const row = this._db.prepare("SELECT id, name, text FROM attachments WHERE id = ? AND conversation_id = ?").get(attachmentId, conversationId) as {
            id: number, name: string, text: string
        } | undefined;
        if (row == null)
            throw new CleanroomError("PASSAGE_NOT_FOUND", `Conversation ${conversationId} holds no document with id ${attachmentId}.`, {conversationId, attachmentId});
        return {attachmentId: row.id, name: row.name, pages: pagesFromText(row.text)};
    }

    /** Each of the conversation's documents, oldest first, with what of it went to the local model and to the cloud. */
    public isolationDocuments(conversationId: ConversationId): IsolationDocument[] {
        const documents = this._db.prepare(`SELECT a.id, a.name, a.bytes, a.pages, a.mode, a.created_at,
                (SELECT count(DISTINCT s.message_id) FROM reply_sources s WHERE s.attachment_id = a.id AND s.route = 'local' AND s.chunk_id IS NULL) AS replies_whole,
                (SELECT count(*) FROM reply_sources s WHERE s.attachment_id = a.id AND s.route = 'local' AND s.chunk_id IS NOT NULL) AS passages,
                (SELECT count(DISTINCT s.message_id) FROM reply_sources s WHERE s.attachment_id = a.id AND s.route = 'local' AND s.chunk_id IS NOT NULL) AS replies_passages
            FROM attachments a WHERE a.conversation_id = ? ORDER BY a.id`).all(conversationId) as Array<{
            id: number, name: string, bytes: number, pages: number, mode: "whole" | "retrieved", created_at: number,
            replies_whole: number, passages: number, replies_passages: number
        }>;
        const cloudSends = this._db.prepare(`SELECT attachment_id, endpoint_host, created_at FROM reply_sources
            WHERE conversation_id = ? AND route = 'cloud' ORDER BY id`).all(conversationId) as Array<{attachment_id: number, endpoint_host: string, created_at: number}>;
        return documents.map((document) => ({
            attachmentId: document.id, name: document.name, bytes: document.bytes, pages: document.pages, mode: document.mode,
            attachedAt: document.created_at,
            local: {repliesGivenWhole: document.replies_whole, passagesGiven: document.passages, repliesGivenPassages: document.replies_passages},
            cloud: cloudSends.filter((send) => send.attachment_id === document.id).map((send) => ({endpointHost: send.endpoint_host, at: send.created_at}))
        }));
    }
}

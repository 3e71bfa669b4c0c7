import type Database from "better-sqlite3-multiple-ciphers";
import type {ConversationId, MessageAttachment} from "../../common/types.js";
import {chunkDocument, type DocumentChunk} from "./chunkDocument.js";
import {cosineOfUnitVectors, fuseRankings, vectorFromBlob, vectorToBlob} from "./chunkVectors.js";
import {pagesFromText, pagesToText, wholeDocumentBlock, type RetrievedPassage} from "./documentPrompt.js";
import type {DocumentFormat, ExtractedDocument} from "./extraction/types.js";

export type AttachmentMode = "whole" | "retrieved";

/** The embeddings of a document's chunks (one unit vector per chunk, in order) by the embedding model `model` (its fingerprint). */
export type ChunkEmbeddings = {model: string, vectors: Float32Array[]};

/** A document as a turn stores it with its user message; `embeddings` only with `chunks`, a vector for each. */
export type NewAttachment = {document: ExtractedDocument, tokens: number, mode: AttachmentMode, chunks?: DocumentChunk[], embeddings?: ChunkEmbeddings};

/** A document this turn brings, not stored yet, as retrieval ranks its chunks (`vectors`: one per chunk, by the query's model). */
export type PendingDocument = {name: string, chunks: DocumentChunk[], vectors?: Float32Array[]};

/** The query's embedding: retrieval then fuses BM25 with the cosine similarity of the chunks embedded by the same model. */
export type QueryEmbedding = {model: string, vector: Float32Array};

/** A stored document with its text (for the prompt, export): never sent to a front end as such. */
export type AttachmentWithText = MessageAttachment & {messageId: number, pages: number, text: string};

type AttachmentRow = {
    id: number, conversation_id: string, message_id: number, name: string, format: DocumentFormat, bytes: number, pages: number,
    tokens: number, mode: AttachmentMode, text: string, created_at: number
};

/** Retrieval looks at this many of the best-ranked chunks at most. */
const candidateLimit = 24;

/** Thrown inside the planning transaction to roll it back once the ranking is read. */
class RollBack extends Error {}

/**
 * Documents attached to messages, and their chunks indexed by FTS5, in the conversation store's
 * database (encrypted, secure-delete). Every query names the conversation: a turn retrieves its
 * own conversation's chunks and never another's.
 */
export class AttachmentStore {
    private readonly _db: Database.Database;

    public constructor(db: Database.Database) {
        this._db = db;
    }

    /** Stores a document with its chunks, as part of the user message `messageId`. */
    public add(conversationId: ConversationId, messageId: number, {document, tokens, mode, chunks = chunkDocument(document.pages), embeddings}: NewAttachment): number {
        const {lastInsertRowid} = this._db.prepare(`
            INSERT INTO attachments (conversation_id, message_id, name, format, bytes, pages, tokens, mode, text, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        `).run(conversationId, messageId, document.name, document.format, document.bytes, document.pages.length, tokens, mode,
            pagesToText(document.pages), Date.now());
        const attachmentId = Number(lastInsertRowid);
        const insertChunk = this._db.prepare(`INSERT INTO attachment_chunks (conversation_id, attachment_id, page, start_line, end_line, text)
            VALUES (?, ?, ?, ?, ?, ?)`);
        chunks.forEach((chunk, index) => {
            const {lastInsertRowid: chunkId} = insertChunk.run(conversationId, attachmentId, chunk.page, chunk.startLine, chunk.endLine, chunk.text);
            const vector = embeddings?.vectors[index];
            if (vector != null)
                this._insertVector(conversationId, Number(chunkId), embeddings!.model, vector);
        });
        return attachmentId;
    }

    /** Runs `work` in one transaction of this database (with the conversation store's writes, which share it). */
    public transaction<T>(work: () => T): T {
        return this._db.transaction(work)();
    }

    /** The conversation's documents with their text, oldest first. */
    public ofConversation(conversationId: ConversationId): AttachmentWithText[] {
        return (this._db.prepare("SELECT * FROM attachments WHERE conversation_id = ? ORDER BY id").all(conversationId) as AttachmentRow[])
            .map(attachmentFromRow);
    }

    /** What the model is given of each message's documents that went in whole: their blocks, by message id. */
    public wholeBlocksByMessage(conversationId: ConversationId): Map<number, string[]> {
        const blocks = new Map<number, string[]>();
        for (const attachment of this.ofConversation(conversationId).filter((stored) => stored.mode === "whole"))
            blocks.set(attachment.messageId, [...blocks.get(attachment.messageId) ?? [], wholeDocumentBlock(attachment.name, pagesFromText(attachment.text))]);
        return blocks;
    }

    /** True when the conversation has a document that is retrieved chunk by chunk. */
    public hasRetrieved(conversationId: ConversationId): boolean {
        return this._db.prepare("SELECT 1 FROM attachments WHERE conversation_id = ? AND mode = 'retrieved' LIMIT 1").get(conversationId) != null;
    }

    /** How many of the conversation's chunks have a vector by `model` (all models when none is named). */
    public vectorCount(conversationId: ConversationId, model?: string): number {
        return (this._db.prepare(`SELECT count(*) AS count FROM attachment_chunk_vectors WHERE conversation_id = ?${model == null ? "" : " AND model = ?"}`)
            .get(...model == null ? [conversationId] : [conversationId, model]) as {count: number}).count;
    }

    /**
     * The chunks of the conversation's retrieved documents that best match `query`, best first (BM25
     * through FTS5's `bm25()`), together with `pending` documents that arrive with this turn and are
     * not stored yet: those are indexed inside a transaction that is rolled back once the ranking is
     * read. With `queryEmbedding`, the chunks embedded by its model are also ranked by cosine
     * similarity, and the two rankings fused (reciprocal rank fusion); chunks without such a vector
     * rank by BM25 alone. When neither ranks anything, the documents' first chunks (the newest document first).
     */
    public retrieve(conversationId: ConversationId, query: string, pending: readonly PendingDocument[] = [], queryEmbedding?: QueryEmbedding): RetrievedPassage[] {
        const match = ftsAnyWordQuery(query);
        let passages: RetrievedPassage[] = [];
        try {
            this._db.transaction(() => {
                // Pending chunks point at attachment ids -1, -2, … that exist in no table: the foreign
                // keys are checked at commit, and this transaction never commits.
                this._db.pragma("defer_foreign_keys = ON");
                const insertChunk = this._db.prepare(`INSERT INTO attachment_chunks (conversation_id, attachment_id, page, start_line, end_line, text)
                    VALUES (?, ?, ?, ?, ?, ?)`);
                pending.forEach(({chunks, vectors}, index) => {
                    chunks.forEach((chunk, chunkIndex) => {
                        const {lastInsertRowid: chunkId} = insertChunk.run(conversationId, -(index + 1), chunk.page, chunk.startLine, chunk.endLine, chunk.text);
                        const vector = vectors?.[chunkIndex];
                        if (vector != null && queryEmbedding != null)
                            this._insertVector(conversationId, Number(chunkId), queryEmbedding.model, vector);
                    });
                });
                const select = `SELECT c.id AS id, c.attachment_id AS attachment_id, a.name AS name, c.page AS page, c.start_line AS start_line,
                    c.end_line AS end_line, c.text AS text`;
                const ofThisConversation = "c.conversation_id = @conversationId AND (c.attachment_id < 0 OR a.mode = 'retrieved')";
                type Row = {id: number, attachment_id: number, name: string | null, page: number, start_line: number, end_line: number, text: string};
                let rows: Row[] = [];
                if (match != null)
                    rows = this._db.prepare(`${select}
                        FROM attachment_chunks_fts f JOIN attachment_chunks c ON c.id = f.rowid LEFT JOIN attachments a ON a.id = c.attachment_id
                        WHERE attachment_chunks_fts MATCH @match AND ${ofThisConversation}
                        ORDER BY bm25(attachment_chunks_fts), c.id LIMIT ${candidateLimit}`).all({conversationId, match}) as Row[];
                if (queryEmbedding != null) {
                    const nearest = this._nearestChunks(conversationId, ofThisConversation, queryEmbedding);
                    if (nearest.length > 0) {
                        const byId = new Map(rows.map((row) => [row.id, row]));
                        const missing = nearest.filter((id) => !byId.has(id));
                        if (missing.length > 0)
                            for (const row of this._db.prepare(`${select} FROM attachment_chunks c LEFT JOIN attachments a ON a.id = c.attachment_id
                                WHERE c.id IN (${missing.map(() => "?").join(", ")})`).all(...missing) as Row[])
                                byId.set(row.id, row);
                        rows = fuseRankings([rows.map((row) => row.id), nearest]).slice(0, candidateLimit).map((id) => byId.get(id)!);
                    }
                }
                if (rows.length === 0)
                    rows = this._db.prepare(`${select}
                        FROM attachment_chunks c LEFT JOIN attachments a ON a.id = c.attachment_id
                        WHERE ${ofThisConversation}
                        ORDER BY c.attachment_id < 0 DESC, abs(c.attachment_id) DESC, c.id LIMIT ${candidateLimit}`).all({conversationId}) as Row[];
                passages = rows.map((row) => ({
                    attachmentId: row.attachment_id < 0 ? null : row.attachment_id,
                    name: row.attachment_id < 0 ? pending[-row.attachment_id - 1]!.name : row.name!,
                    page: row.page, startLine: row.start_line, endLine: row.end_line, text: row.text
                }));
                throw new RollBack();
            })();
        } catch (error) {
            if (!(error instanceof RollBack))
                throw error;
        }
        return passages;
    }

    private _insertVector(conversationId: ConversationId, chunkId: number, model: string, vector: Float32Array) {
        this._db.prepare("INSERT INTO attachment_chunk_vectors (chunk_id, conversation_id, model, vector) VALUES (?, ?, ?, ?)")
            .run(chunkId, conversationId, model, vectorToBlob(vector));
    }

    /** Ids of the conversation's retrievable chunks embedded by the query's model, most similar first, at most `candidateLimit`. */
    private _nearestChunks(conversationId: ConversationId, ofThisConversation: string, {model, vector}: QueryEmbedding): number[] {
        const rows = this._db.prepare(`SELECT c.id AS id, v.vector AS vector
            FROM attachment_chunk_vectors v JOIN attachment_chunks c ON c.id = v.chunk_id LEFT JOIN attachments a ON a.id = c.attachment_id
            WHERE v.conversation_id = @conversationId AND v.model = @model AND ${ofThisConversation}`)
            .all({conversationId, model}) as Array<{id: number, vector: Buffer}>;
        return rows.map((row) => ({id: row.id, similarity: cosineOfUnitVectors(vector, vectorFromBlob(row.vector))}))
            .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
            .slice(0, candidateLimit)
            .map((row) => row.id);
    }
}

/** A stored document as it was read, to be sent or stored again (a regenerated prompt's). */
export function readDocumentOf(document: AttachmentWithText): ExtractedDocument {
    return {name: document.name, format: document.format, bytes: document.bytes, pages: pagesFromText(document.text)};
}

/** Every word of `text` that has a letter or digit, quoted (never FTS5 syntax), any of them matching; null when there is none. */
function ftsAnyWordQuery(text: string): string | null {
    const words = text.normalize("NFC").split(/[^\p{L}\p{N}]+/u).filter((word) => word !== "");
    return words.length === 0 ? null : [...new Set(words)].map((word) => `"${word}"`).join(" OR ");
}

function attachmentFromRow(row: AttachmentRow): AttachmentWithText {
    return {
        id: row.id, messageId: row.message_id, name: row.name, format: row.format, bytes: row.bytes, pages: row.pages,
        tokens: row.tokens, mode: row.mode, text: row.text
    };
}


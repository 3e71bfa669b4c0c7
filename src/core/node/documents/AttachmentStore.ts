import type Database from "better-sqlite3-multiple-ciphers";
import type {ConversationId, MessageAttachment} from "../../common/types.js";
import {chunkDocument, type DocumentChunk} from "./chunkDocument.js";
import {indexChunkTerms, storeChunkTerms, termsOf, uint32sFromBlob} from "./chunkTerms.js";
import {cosineOfUnitVectors, fuseRankings, vectorFromBlob, vectorToBlob} from "./chunkVectors.js";
import {pagesFromText, pagesToText, wholeDocumentBlock, type RetrievedPassage} from "./documentPrompt.js";
import type {DocumentFormat, ExtractedDocument} from "./extraction/types.js";

export type AttachmentMode = "whole" | "retrieved";

/** A document that arrives with a turn, chunked, not stored yet; `vectors`: one per chunk, by the query's embedding model. */
export type PendingDocument = {name: string, chunks: DocumentChunk[], vectors?: Float32Array[]};

/** The embeddings of a document's chunks (one unit vector per chunk, in order) by the embedding model `model` (its fingerprint). */
export type ChunkEmbeddings = {model: string, vectors: Float32Array[]};

/** A document as a turn stores it with its user message; `embeddings` only with `chunks`, a vector for each. */
export type NewAttachment = {document: ExtractedDocument, tokens: number, mode: AttachmentMode, chunks?: DocumentChunk[], embeddings?: ChunkEmbeddings};

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

/**
 * Documents attached to messages, and their chunks indexed by FTS5, in the conversation store's
 * database (encrypted, secure-delete). Every query names the conversation: a turn retrieves its
 * own conversation's chunks and never another's.
 */
export class AttachmentStore {
    private readonly _db: Database.Database;
    /** Statements of fixed text, prepared once: a turn's retrieval runs several, and preparing one costs about as much as running it. */
    private readonly _prepared = new Map<string, Database.Statement>();

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
        const insertVector = this._db.prepare("INSERT INTO attachment_chunk_vectors (chunk_id, conversation_id, model, vector) VALUES (?, ?, ?, ?)");
        const stored = chunks.map((chunk, index) => {
            const chunkId = Number(insertChunk.run(conversationId, attachmentId, chunk.page, chunk.startLine, chunk.endLine, chunk.text).lastInsertRowid);
            const vector = embeddings?.vectors[index];
            if (vector != null)
                insertVector.run(chunkId, conversationId, embeddings!.model, vectorToBlob(vector));
            return {id: chunkId, text: chunk.text};
        });
        if (mode === "retrieved")
            storeChunkTerms(this._db, conversationId, attachmentId, stored);
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

    /** The documents stored with one message of the conversation, with their text, oldest first. */
    public ofMessage(conversationId: ConversationId, messageId: number): AttachmentWithText[] {
        return (this._db.prepare("SELECT * FROM attachments WHERE message_id = ? AND conversation_id = ? ORDER BY id").all(messageId, conversationId) as AttachmentRow[])
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

    /**
     * The chunks of the conversation's retrieved documents that best match `query`, best first (BM25
     * with the statistics of this conversation's chunks alone, see `_rankByBm25`), together with
     * `pending` documents that arrive with this turn and are not stored yet. When no word of the query
     * matches, the documents' first chunks (the newest document first).
     *
     * Nothing is written to the store: pending chunks are counted in memory. The store receives each
     * chunk once, when the turn that brings it is stored (`add`).
     */
    public retrieve(conversationId: ConversationId, query: string, pending: readonly PendingDocument[] = [], queryEmbedding?: QueryEmbedding): RetrievedPassage[] {
        const byWords = this._retrieveByWords(conversationId, query, pending);
        const byMeaning = queryEmbedding == null ? [] : this._nearestChunks(conversationId, pending, queryEmbedding);
        if (byMeaning.length === 0)
            return byWords.passages;
        // Reciprocal rank fusion of the two rankings; the first chunks (what BM25 gives when no word matches) are no ranking.
        const keyed = new Map<string, RetrievedPassage>();
        const keysOf = (passages: RetrievedPassage[]) => passages.map((passage) => {
            const key = JSON.stringify([passage.attachmentId, passage.pendingIndex, passage.page, passage.startLine, passage.endLine, passage.text]);
            keyed.set(key, passage);
            return key;
        });
        return fuseRankings([keysOf(byWords.matched ? byWords.passages : []), keysOf(byMeaning)]).slice(0, candidateLimit).map((key) => keyed.get(key)!);
    }

    /** The conversation's retrieved chunks that have no vector by `model` yet (stored before it was chosen), in document order. */
    public chunksWithoutVector(conversationId: ConversationId, model: string): Array<{chunkId: number, text: string}> {
        return this._db.prepare(`SELECT c.id AS chunkId, c.text AS text FROM attachment_chunks c JOIN attachments a ON a.id = c.attachment_id
            WHERE c.conversation_id = ? AND a.mode = 'retrieved'
            AND NOT EXISTS (SELECT 1 FROM attachment_chunk_vectors v WHERE v.chunk_id = c.id AND v.model = ?)
            ORDER BY c.id`).all(conversationId, model) as Array<{chunkId: number, text: string}>;
    }

    /**
     * Stores vectors by `model` for chunks of the conversation that had none by it (see `chunksWithoutVector`);
     * a chunk keeps one vector, so one by a model chosen before is replaced.
     */
    public addVectors(conversationId: ConversationId, model: string, vectors: ReadonlyArray<{chunkId: number, vector: Float32Array}>): void {
        const insert = this._db.prepare(`INSERT OR REPLACE INTO attachment_chunk_vectors (chunk_id, conversation_id, model, vector)
            SELECT id, conversation_id, ?, ? FROM attachment_chunks WHERE id = ? AND conversation_id = ?`);
        this.transaction(() => {
            for (const {chunkId, vector} of vectors)
                insert.run(model, vectorToBlob(vector), chunkId, conversationId);
        });
    }

    /** How many of the conversation's chunks have a vector by `model` (all models when none is named). */
    public vectorCount(conversationId: ConversationId, model?: string): number {
        return (this._db.prepare(`SELECT count(*) AS count FROM attachment_chunk_vectors WHERE conversation_id = ?${model == null ? "" : " AND model = ?"}`)
            .get(...model == null ? [conversationId] : [conversationId, model]) as {count: number}).count;
    }

    /**
     * The conversation's retrievable chunks (stored, and `pending` ones with vectors) embedded by the
     * query's model, most similar first, at most `candidateLimit`. Only this conversation's vectors are read.
     */
    private _nearestChunks(conversationId: ConversationId, pending: readonly PendingDocument[], {model, vector}: QueryEmbedding): RetrievedPassage[] {
        const stored = (this._db.prepare(`SELECT v.chunk_id AS id, v.vector AS vector FROM attachment_chunk_vectors v
            JOIN attachment_chunks c ON c.id = v.chunk_id JOIN attachments a ON a.id = c.attachment_id
            WHERE v.conversation_id = ? AND v.model = ? AND a.mode = 'retrieved'`).all(conversationId, model) as Array<{id: number, vector: Buffer}>)
            .map((row) => ({storedId: row.id, passage: null as RetrievedPassage | null, similarity: cosineOfUnitVectors(vector, vectorFromBlob(row.vector))}));
        const fresh = pending.flatMap(({name, chunks, vectors = []}, pendingIndex) => chunks.flatMap((chunk, index) => vectors[index] == null ? [] : [{
            storedId: null, passage: {attachmentId: null, pendingIndex, name, ...chunk} as RetrievedPassage, similarity: cosineOfUnitVectors(vector, vectors[index]!)
        }]));
        const nearest = [...stored, ...fresh].sort((a, b) => b.similarity - a.similarity).slice(0, candidateLimit);
        const ids = nearest.flatMap((entry) => entry.storedId == null ? [] : [entry.storedId]);
        const rows = ids.length === 0 ? [] : this._db.prepare(`SELECT c.id AS id, ${storedChunkColumns} FROM attachment_chunks c JOIN attachments a ON a.id = c.attachment_id
            WHERE c.id IN (${ids.map(() => "?").join(", ")})`).all(...ids) as Array<StoredChunkRow & {id: number}>;
        const byId = new Map(rows.map((row) => [row.id, storedPassage(row)]));
        return nearest.map((entry) => entry.passage ?? byId.get(entry.storedId!)!);
    }

    /** BM25 retrieval; `matched`: whether any word matched (else the passages are the documents' first chunks). */
    private _retrieveByWords(conversationId: ConversationId, query: string, pending: readonly PendingDocument[]): {passages: RetrievedPassage[], matched: boolean} {
        const pendingChunks: RetrievedPassage[] = pending.flatMap(({name, chunks}, pendingIndex) => chunks.map((chunk) => ({attachmentId: null, pendingIndex, name, ...chunk})));
        const ranked = this._rankByBm25(conversationId, [...new Set(termsOf(query))], pendingChunks);
        if (ranked.length > 0)
            return {passages: ranked, matched: true};
        const firstPending = pending.flatMap((_document, index) => pendingChunks.filter((chunk) => chunk.pendingIndex === pending.length - 1 - index));
        return {passages: [...firstPending, ...this._firstStoredChunks(conversationId).map(storedPassage)].slice(0, candidateLimit), matched: false};
    }

    /**
     * The conversation's chunks (stored, and `pendingChunks`) that hold any of `terms`, best first by
     * BM25 computed as FTS5's `bm25()` computes it (k1 = 1.2, b = 0.75, a word's IDF made 1e-6 when it
     * is not positive), ties in chunk order, stored chunks first; at most `candidateLimit`. Its
     * statistics (how many chunks, their average length, how many chunks hold each word) are those of
     * these chunks alone: what other conversations hold changes neither the scores nor which chunks
     * are read. A word in at least half of the chunks ("the") thus weighs 1e-6, and lifts a chunk only
     * above chunks that have none of the words.
     */
    private _rankByBm25(conversationId: ConversationId, terms: readonly string[], pendingChunks: readonly RetrievedPassage[]): RetrievedPassage[] {
        if (terms.length === 0)
            return [];
        const documents = this._statement("SELECT attachment_id, chunk_ids, lengths FROM attachment_chunk_lengths WHERE conversation_id = ? ORDER BY attachment_id")
            .raw().all(conversationId) as Array<[number, Buffer, Buffer]>;
        const offsets = new Map<number, number>();
        let storedCount = 0;
        for (const [attachmentId, chunkIds] of documents) {
            offsets.set(attachmentId, storedCount);
            storedCount += chunkIds.byteLength / 4;
        }
        const pendingTerms = indexChunkTerms(pendingChunks.map((chunk) => chunk.text));
        const count = storedCount + pendingChunks.length;
        const chunkIds = new Uint32Array(storedCount);
        const lengths = new Float64Array(count);
        for (const [attachmentId, ids, documentLengths] of documents) {
            chunkIds.set(uint32sFromBlob(ids), offsets.get(attachmentId)!);
            lengths.set(uint32sFromBlob(documentLengths), offsets.get(attachmentId)!);
        }
        lengths.set(pendingTerms.lengths, storedCount);
        const averageLength = lengths.reduce((sum, length) => sum + length, 0) / count || 1;

        const scores = new Float64Array(count);
        const postingsOf = this._statement("SELECT attachment_id, postings FROM attachment_terms WHERE conversation_id = ? AND term = ?").raw();
        for (const term of terms) {
            const lists: Array<{offset: number, pairs: ArrayLike<number>}> = (postingsOf.all(conversationId, term) as Array<[number, Buffer]>)
                .map(([attachmentId, postings]) => ({offset: offsets.get(attachmentId)!, pairs: uint32sFromBlob(postings)}));
            lists.push({offset: storedCount, pairs: pendingTerms.postings.get(term) ?? []});
            const holding = lists.reduce((sum, list) => sum + list.pairs.length / 2, 0);
            if (holding === 0)
                continue;
            const idf = Math.log((count - holding + 0.5) / (holding + 0.5));
            const weight = idf > 0 ? idf : minimumIdf;
            for (const {offset, pairs} of lists)
                for (let pair = 0; pair < pairs.length; pair += 2) {
                    const chunk = offset + pairs[pair]!, frequency = pairs[pair + 1]!;
                    scores[chunk]! += weight * frequency * (bm25K1 + 1) / (frequency + bm25K1 * (1 - bm25B + bm25B * lengths[chunk]! / averageLength));
                }
        }

        const best = bestOf(scores, candidateLimit);
        const storedIds = best.filter((chunk) => chunk < storedCount).map((chunk) => chunkIds[chunk]!);
        const storedById = new Map(storedIds.length === 0 ? [] : (this._statement(`SELECT c.id AS id, ${storedChunkColumns}
            FROM attachment_chunks c JOIN attachments a ON a.id = c.attachment_id
            WHERE c.conversation_id = ? AND c.id IN (SELECT value FROM json_each(?))`).all(conversationId, JSON.stringify(storedIds)) as Array<StoredChunkRow & {id: number}>)
            .map((row) => [row.id, storedPassage(row)]));
        return best.map((chunk) => chunk < storedCount ? storedById.get(chunkIds[chunk]!)! : pendingChunks[chunk - storedCount]!);
    }

    /** The first chunks of the conversation's retrieved documents, the newest document first. */
    private _firstStoredChunks(conversationId: ConversationId): StoredChunkRow[] {
        return this._statement(`
            SELECT ${storedChunkColumns} FROM attachments a JOIN attachment_chunks c ON c.attachment_id = a.id
            WHERE a.conversation_id = ? AND a.mode = 'retrieved'
            ORDER BY a.id DESC, c.id LIMIT ${candidateLimit}
        `).all(conversationId) as StoredChunkRow[];
    }

    private _statement(sql: string): Database.Statement {
        let statement = this._prepared.get(sql);
        if (statement == null) {
            statement = this._db.prepare(sql);
            this._prepared.set(sql, statement);
        }
        return statement;
    }
}

type StoredChunkRow = {attachment_id: number, name: string, page: number, start_line: number, end_line: number, text: string};
const storedChunkColumns = "c.attachment_id AS attachment_id, a.name AS name, c.page AS page, c.start_line AS start_line, c.end_line AS end_line, c.text AS text";
/** FTS5's `bm25()` parameters, and the IDF it gives a word found in at least half of the rows. */
const bm25K1 = 1.2;
const bm25B = 0.75;
const minimumIdf = 1e-6;

function storedPassage(row: StoredChunkRow): RetrievedPassage {
    return {attachmentId: row.attachment_id, pendingIndex: null, name: row.name, page: row.page, startLine: row.start_line, endLine: row.end_line, text: row.text};
}

/** A stored document as it was read, to be sent or stored again (a regenerated prompt's). */
export function readDocumentOf(document: AttachmentWithText): ExtractedDocument {
    return {name: document.name, format: document.format, bytes: document.bytes, pages: pagesFromText(document.text)};
}

/** The indexes of the `limit` highest positive `scores`, highest first, ties in index order. */
function bestOf(scores: Float64Array, limit: number): number[] {
    const best: number[] = [];
    scores.forEach((score, index) => {
        if (score <= 0 || (best.length === limit && score <= scores[best[limit - 1]!]!))
            return;
        let place = best.length;
        while (place > 0 && scores[best[place - 1]!]! < score)
            place--;
        best.splice(place, 0, index);
        if (best.length > limit)
            best.pop();
    });
    return best;
}

function attachmentFromRow(row: AttachmentRow): AttachmentWithText {
    return {
        id: row.id, messageId: row.message_id, name: row.name, format: row.format, bytes: row.bytes, pages: row.pages,
        tokens: row.tokens, mode: row.mode, text: row.text
    };
}


import type Database from "better-sqlite3-multiple-ciphers";
import type {ConversationId, MessageAttachment} from "../../common/types.js";
import {chunkDocument, type DocumentChunk} from "./chunkDocument.js";
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
    private _vocabularyReady = false;

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
        chunks.forEach((chunk, index) => {
            const {lastInsertRowid: chunkId} = insertChunk.run(conversationId, attachmentId, chunk.page, chunk.startLine, chunk.endLine, chunk.text);
            const vector = embeddings?.vectors[index];
            if (vector != null)
                insertVector.run(chunkId, conversationId, embeddings!.model, vectorToBlob(vector));
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
     * through FTS5's `bm25()`), together with `pending` documents that arrive with this turn and are
     * not stored yet. When no word of the query matches, the documents' first chunks (the newest
     * document first).
     *
     * Nothing is written to the store: pending chunks are ranked with the stored best candidates in
     * an FTS5 table of the connection's temporary schema, which lives in memory (`temp_store =
     * MEMORY`) and is dropped at once. The store's index receives each chunk once, when the turn that
     * brings it is stored (`add`).
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
        const words = queryWords(query);
        const match = ftsAnyOf(words);
        const stored = match == null ? [] : this._bestStoredChunksOf(conversationId, words);
        if (pending.length === 0)
            return {passages: (stored.length > 0 ? stored : this._firstStoredChunks(conversationId)).map(storedPassage), matched: stored.length > 0};
        const candidates: RetrievedPassage[] = [
            ...stored.map(storedPassage),
            ...pending.flatMap(({name, chunks}, pendingIndex) => chunks.map((chunk) => ({attachmentId: null, pendingIndex, name, ...chunk})))
        ];
        const ranked = match == null ? [] : this._rankInMemory(candidates.map((candidate) => candidate.text), match).map((index) => candidates[index]!);
        if (ranked.length > 0)
            return {passages: ranked, matched: true};
        const firstPending = pending.flatMap((_document, index) => candidates.filter((candidate) => candidate.pendingIndex === pending.length - 1 - index));
        return {passages: [...firstPending, ...this._firstStoredChunks(conversationId).map(storedPassage)].slice(0, candidateLimit), matched: false};
    }

    /**
     * The conversation's best-ranked stored chunks. The conversation's chunk ids are read from the
     * attachments' covering index and filter FTS5's rows before `bm25()` runs: joining each matching
     * row to its chunk to read its conversation read every matching chunk's text, of every
     * conversation, and decrypted its pages (the page cache holds a few MiB).
     */
    private _bestStoredChunks(conversationId: ConversationId, match: string): StoredChunkRow[] {
        return this._statement(`
            WITH ranked AS (
                SELECT f.rowid AS id, bm25(attachment_chunks_fts) AS score FROM attachment_chunks_fts f
                WHERE attachment_chunks_fts MATCH @match AND +f.rowid IN (
                    SELECT c.id FROM attachments a JOIN attachment_chunks c ON c.attachment_id = a.id
                    WHERE a.conversation_id = @conversationId AND a.mode = 'retrieved'
                )
                ORDER BY score, id LIMIT ${candidateLimit}
            )
            SELECT ${storedChunkColumns} FROM ranked r JOIN attachment_chunks c ON c.id = r.id JOIN attachments a ON a.id = c.attachment_id
            ORDER BY r.score, r.id
        `).all({conversationId, match}) as StoredChunkRow[];
    }

    /**
     * The conversation's best-ranked stored chunks for any of `words`, asked first without the words
     * found in at least half of the index's rows. FTS5's `bm25()` gives such a word ("the", "what")
     * an IDF of 1e-6 (log((N - n + 0.5) / (n + 0.5)) is not positive, and is clamped): it cannot lift
     * a chunk above one that has a weightier word, yet it makes nearly every chunk a match whose
     * score is computed, a read of its size record each. Only when the weightier words match fewer
     * chunks than are wanted are all the words asked, so that the same chunks fill the rest.
     */
    private _bestStoredChunksOf(conversationId: ConversationId, words: readonly string[]): StoredChunkRow[] {
        const rows = this._statement("SELECT count(*) FROM attachment_chunks").pluck().get() as number;
        const weighty = words.filter((word) => this._rowsHolding(word, Math.ceil(rows / 2)) < rows / 2);
        const best = weighty.length > 0 ? this._bestStoredChunks(conversationId, ftsAnyOf(weighty)!) : [];
        return best.length < candidateLimit && weighty.length < words.length ? this._bestStoredChunks(conversationId, ftsAnyOf(words)!) : best;
    }

    /**
     * How many of the index's rows hold `word`, or at least `enough` when there are more. Read from the
     * index's vocabulary (`fts5vocab`, its `row` table: a term's row count, its list walked in FTS5's own
     * code) under the word folded as the tokenizer folds it; a word not found that way (folded otherwise,
     * or in no row) is counted by matching it, up to `enough` rows, so that a wrong guess costs time only.
     */
    private _rowsHolding(word: string, enough: number): number {
        if (!this._vocabularyReady) {
            this._db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${indexVocabulary} USING fts5vocab('main', 'attachment_chunks_fts', 'row')`);
            this._vocabularyReady = true;
        }
        const term = foldedLikeTokenizer(word);
        const fromVocabulary = term == null ? undefined : this._statement(`SELECT doc FROM temp.${indexVocabulary} WHERE term = ?`).pluck().get(term) as number | undefined;
        return fromVocabulary ?? this._statement("SELECT count(*) FROM (SELECT rowid FROM attachment_chunks_fts WHERE attachment_chunks_fts MATCH ? LIMIT ?)")
            .pluck().get(ftsAnyOf([word]), enough) as number;
    }

    private _statement(sql: string): Database.Statement {
        let statement = this._prepared.get(sql);
        if (statement == null) {
            statement = this._db.prepare(sql);
            this._prepared.set(sql, statement);
        }
        return statement;
    }

    /** The first chunks of the conversation's retrieved documents, the newest document first. */
    private _firstStoredChunks(conversationId: ConversationId): StoredChunkRow[] {
        return this._statement(`
            SELECT ${storedChunkColumns} FROM attachments a JOIN attachment_chunks c ON c.attachment_id = a.id
            WHERE a.conversation_id = ? AND a.mode = 'retrieved'
            ORDER BY a.id DESC, c.id LIMIT ${candidateLimit}
        `).all(conversationId) as StoredChunkRow[];
    }

    /** Indexes of `texts` that match, best first (BM25 among `texts` alone), through an FTS5 table in memory that is dropped before returning. */
    private _rankInMemory(texts: readonly string[], match: string): number[] {
        this._db.exec(`CREATE VIRTUAL TABLE temp.${inMemoryIndex} USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')`);
        try {
            const insert = this._db.prepare(`INSERT INTO temp.${inMemoryIndex} (rowid, text) VALUES (?, ?)`);
            texts.forEach((text, index) => insert.run(index + 1, text));
            return (this._db.prepare(`SELECT rowid FROM temp.${inMemoryIndex} WHERE ${inMemoryIndex} MATCH ?
                ORDER BY bm25(${inMemoryIndex}), rowid LIMIT ${candidateLimit}`).pluck().all(match) as number[]).map((rowid) => rowid - 1);
        } finally {
            this._db.exec(`DROP TABLE temp.${inMemoryIndex}`);
        }
    }
}

type StoredChunkRow = {attachment_id: number, name: string, page: number, start_line: number, end_line: number, text: string};
const storedChunkColumns = "c.attachment_id AS attachment_id, a.name AS name, c.page AS page, c.start_line AS start_line, c.end_line AS end_line, c.text AS text";
/** The temporary FTS5 table a turn's new documents are ranked in. */
const inMemoryIndex = "pending_chunks_fts";
/** The temporary `fts5vocab` table over the store's index: each term's row count. */
const indexVocabulary = "attachment_chunks_vocabulary";

function storedPassage(row: StoredChunkRow): RetrievedPassage {
    return {attachmentId: row.attachment_id, pendingIndex: null, name: row.name, page: row.page, startLine: row.start_line, endLine: row.end_line, text: row.text};
}

/** A stored document as it was read, to be sent or stored again (a regenerated prompt's). */
export function readDocumentOf(document: AttachmentWithText): ExtractedDocument {
    return {name: document.name, format: document.format, bytes: document.bytes, pages: pagesFromText(document.text)};
}

/** The distinct words of `text`: runs of letters and digits. */
function queryWords(text: string): string[] {
    return [...new Set(text.normalize("NFC").split(/[^\p{L}\p{N}]+/u).filter((word) => word !== ""))];
}

/**
 * `word` as the index's tokenizer (`unicode61 remove_diacritics 2`) stores it (lower case, without
 * diacritics) when that is certain: when it folds to ASCII letters and digits ("Café" to "cafe").
 * Else null, and the word is counted by matching it: a term looked up under another folding than
 * the tokenizer's could find another word's count.
 */
function foldedLikeTokenizer(word: string): string | null {
    const folded = word.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase();
    return /^[a-z0-9]+$/.test(folded) ? folded : null;
}

/** An FTS5 query matching any of `words`, each quoted (never FTS5 syntax); null when there is none. */
function ftsAnyOf(words: readonly string[]): string | null {
    return words.length === 0 ? null : words.map((word) => `"${word}"`).join(" OR ");
}

function attachmentFromRow(row: AttachmentRow): AttachmentWithText {
    return {
        id: row.id, messageId: row.message_id, name: row.name, format: row.format, bytes: row.bytes, pages: row.pages,
        tokens: row.tokens, mode: row.mode, text: row.text
    };
}


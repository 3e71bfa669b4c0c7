import type Database from "better-sqlite3-multiple-ciphers";
/**
 * The words of chunks as retrieval counts them (BM25 with each conversation's own statistics, see
 * `AttachmentStore.retrieve`): a document's term postings and chunk lengths, stored with it.
 */

/**
 * The terms of `text`: its runs of letters and digits, lower case, without diacritics ("Café" is
 * "cafe"), as FTS5's `unicode61 remove_diacritics 2` tokenizer folds them for the letters that
 * decompose. Queries and chunks are folded by this one function, so a query's term and a chunk's
 * always compare alike.
 */
export function termsOf(text: string): string[] {
    return text.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((term) => term !== "");
}

/** Each term's chunks (their place among the chunks) with its count in each, and each chunk's length in terms. */
export type ChunkTermIndex = {postings: Map<string, number[]>, lengths: number[]};

/** The term postings of `texts` (one per chunk, in order): for each term, pairs [place, count] in place order. */
export function indexChunkTerms(texts: readonly string[]): ChunkTermIndex {
    const postings = new Map<string, number[]>();
    const lengths = texts.map((text, place) => {
        const terms = termsOf(text);
        const counts = new Map<string, number>();
        for (const term of terms)
            counts.set(term, (counts.get(term) ?? 0) + 1);
        for (const [term, count] of counts) {
            const list = postings.get(term);
            if (list == null)
                postings.set(term, [place, count]);
            else
                list.push(place, count);
        }
        return terms.length;
    });
    return {postings, lengths};
}

/** Unsigned 32-bit integers as a little-endian BLOB. */
export function uint32sToBlob(values: readonly number[]): Buffer {
    const blob = Buffer.alloc(values.length * 4);
    values.forEach((value, index) => blob.writeUInt32LE(value, index * 4));
    return blob;
}

/** A BLOB of `uint32sToBlob` read back. */
export function uint32sFromBlob(blob: Uint8Array): Uint32Array {
    const count = Math.floor(blob.byteLength / 4);
    if (blob.byteOffset % 4 === 0 && isLittleEndian)
        return new Uint32Array(blob.buffer, blob.byteOffset, count);
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    return Uint32Array.from({length: count}, (_, index) => view.getUint32(index * 4, true));
}

const isLittleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Stores the term postings and chunk lengths of a retrieved document's chunks (`attachment_terms`,
 * `attachment_chunk_lengths`), in its conversation's rows: a posting names a chunk by its place in
 * `chunks`, whose ids the lengths' row keeps in the same order.
 */
export function storeChunkTerms(db: Database.Database, conversationId: string, attachmentId: number, chunks: ReadonlyArray<{id: number, text: string}>): void {
    const {postings, lengths} = indexChunkTerms(chunks.map((chunk) => chunk.text));
    db.prepare("INSERT INTO attachment_chunk_lengths (attachment_id, conversation_id, chunk_ids, lengths) VALUES (?, ?, ?, ?)")
        .run(attachmentId, conversationId, uint32sToBlob(chunks.map((chunk) => chunk.id)), uint32sToBlob(lengths));
    const insert = db.prepare("INSERT INTO attachment_terms (conversation_id, term, attachment_id, postings) VALUES (?, ?, ?, ?)");
    for (const [term, list] of postings)
        insert.run(conversationId, term, attachmentId, uint32sToBlob(list));
}

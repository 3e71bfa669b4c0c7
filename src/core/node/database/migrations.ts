import crypto from "node:crypto";
import type Database from "better-sqlite3-multiple-ciphers";
import {ConversationIdSchema} from "../../common/types.js";
import {storeChunkTerms} from "../documents/chunkTerms.js";

/**
 * Schema migrations, applied in order, each once, inside a transaction.
 * `PRAGMA user_version` records how many have run. Never edit a released migration: add one.
 */
export const migrations: ReadonlyArray<(db: Database.Database) => void> = [
    (db) => {
        db.exec(`
            CREATE TABLE conversations (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                policy TEXT NOT NULL CHECK (policy IN ('local', 'cloud-allowed')),
                settings_json TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
                content TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('complete', 'streaming', 'interrupted', 'blocked')),
                route TEXT CHECK (route IS NULL OR route IN ('local', 'cloud')),
                route_reason TEXT,
                tokens INTEGER,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
            CREATE TABLE settings (
                key TEXT PRIMARY KEY,
                value_json TEXT NOT NULL
            );
            CREATE TABLE audit_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL,
                data_json TEXT NOT NULL
            );
            CREATE INDEX audit_by_conversation ON audit_events(conversation_id, id);
        `);
    },
    (db) => {
        // Shared-cloud mode: every planted canary is remembered by hash (never in the clear),
        // and a blocked reply keeps only its verdict (kinds, offsets, lengths), never the text.
        db.exec(`
            CREATE TABLE canaries (
                hash TEXT PRIMARY KEY,
                conversation_id TEXT,
                request_id TEXT NOT NULL,
                planted_at INTEGER NOT NULL
            );
            CREATE INDEX canaries_by_request ON canaries(request_id);
            ALTER TABLE messages ADD COLUMN verdict_json TEXT;
        `);
    },
    (db) => {
        // Before one id rule held at every door, the CLI stored ids such as "../../x", "" or
        // 5,000 characters, which the app listed but could neither open nor delete. Each gets a
        // fresh id; its messages, audit trail and canaries follow it.
        const rows = db.prepare("SELECT id FROM conversations").all() as Array<{id: string}>;
        for (const {id} of rows) {
            if (ConversationIdSchema.safeParse(id).success)
                continue;
            const fresh = crypto.randomUUID();
            db.prepare(`INSERT INTO conversations (id, title, policy, settings_json, created_at, updated_at)
                SELECT ?, title, policy, settings_json, created_at, updated_at FROM conversations WHERE id = ?`).run(fresh, id);
            for (const table of ["messages", "audit_events", "canaries"])
                db.prepare(`UPDATE ${table} SET conversation_id = ? WHERE conversation_id = ?`).run(fresh, id);
            db.prepare("DELETE FROM conversations WHERE id = ?").run(id);
            db.prepare("INSERT INTO audit_events (conversation_id, at, kind, data_json) VALUES (?, ?, 'conversation.idReplaced', ?)")
                .run(fresh, Date.now(), JSON.stringify({reason: "the stored id broke the conversation id rule", oldIdLength: id.length}));
        }
    },
    // Private at rest (#11): its migrations stay together here, at the end.
    (db) => {
        // Full-text search over message content: an FTS5 index inside the (encrypted) database,
        // kept in step with `messages` by triggers. `secure-delete` makes a deletion remove the
        // text's tokens from the index's pages instead of marking them deleted.
        db.exec(`
            CREATE VIRTUAL TABLE messages_fts USING fts5(
                content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
            );
            INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
            CREATE TRIGGER messages_fts_after_insert AFTER INSERT ON messages BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END;
            CREATE TRIGGER messages_fts_after_delete AFTER DELETE ON messages BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
            END;
            CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF content ON messages BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END;
            INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
        `);
    },
    // --- #12 (the app's UX): drafts, pins, undoable deletion, reply speed, edit-and-resend branches. One block, appended last. ---
    (db) => {
        // The composer's unsent text, per conversation: it survives a refused turn, a reload and a core restart.
        db.exec(`
            CREATE TABLE drafts (
                conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
                text TEXT NOT NULL,
                updated_at INTEGER NOT NULL
            );
            ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE conversations ADD COLUMN trashed_at INTEGER;
            ALTER TABLE messages ADD COLUMN tokens_per_second REAL;
        `);
    },
    (db) => {
        // Edit and resend keeps the old exchange: messages form a tree (parent_id); the branch shown
        // (and sent to the model) is the one whose messages are active. Existing conversations are one chain.
        db.exec(`
            ALTER TABLE messages ADD COLUMN parent_id INTEGER;
            ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
            UPDATE messages SET parent_id = (
                SELECT MAX(p.id) FROM messages p WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id
            );
            CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id);
        `);
    },
    // --- #25 item 4 (resume at once): one sealed KV snapshot per conversation, gone with it. ---
    (db) => {
        // `sealed`: AES-256-GCM of the context's state under a key derived from the store key; `binding_json`:
        // its associated data (model, context settings, llama.cpp build, token count) but the conversation id.
        db.exec(`
            CREATE TABLE kv_snapshots (
                conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
                binding_json TEXT NOT NULL,
                key_id TEXT NOT NULL,
                nonce BLOB NOT NULL,
                sealed BLOB NOT NULL,
                token_count INTEGER NOT NULL,
                saved_at INTEGER NOT NULL
            );
        `);
    },
    // --- #23 (documents): attachments and their chunks, in the same encrypted database. Appended after #25's. ---
    (db) => {
        // A document belongs to the message that brought it and to that message's conversation; its
        // text goes in whole (`whole`) or is retrieved chunk by chunk (`retrieved`). Every document is
        // chunked (with page and line numbers) and indexed by FTS5: search finds words inside it, and a
        // turn of the same conversation retrieves its chunks (BM25). `secure-delete` as for messages.
        db.exec(`
            CREATE TABLE attachments (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                format TEXT NOT NULL,
                bytes INTEGER NOT NULL,
                pages INTEGER NOT NULL,
                tokens INTEGER NOT NULL,
                mode TEXT NOT NULL CHECK (mode IN ('whole', 'retrieved')),
                text TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE INDEX attachments_by_message ON attachments(message_id);
            CREATE INDEX attachments_by_conversation ON attachments(conversation_id, id);
            CREATE TABLE attachment_chunks (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                attachment_id INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
                page INTEGER NOT NULL,
                start_line INTEGER NOT NULL,
                end_line INTEGER NOT NULL,
                text TEXT NOT NULL
            );
            CREATE INDEX attachment_chunks_by_attachment ON attachment_chunks(attachment_id, id);
            CREATE INDEX attachment_chunks_by_conversation ON attachment_chunks(conversation_id);
            CREATE VIRTUAL TABLE attachment_chunks_fts USING fts5(
                text, content = 'attachment_chunks', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
            );
            INSERT INTO attachment_chunks_fts (attachment_chunks_fts, rank) VALUES ('secure-delete', 1);
            CREATE TRIGGER attachment_chunks_fts_after_insert AFTER INSERT ON attachment_chunks BEGIN
                INSERT INTO attachment_chunks_fts (rowid, text) VALUES (new.id, new.text);
            END;
            CREATE TRIGGER attachment_chunks_fts_after_delete AFTER DELETE ON attachment_chunks BEGIN
                INSERT INTO attachment_chunks_fts (attachment_chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
            END;
        `);
    },
    // --- #29 (the app's local API server): its API keys, stored hashed. Appended after #23's. ---
    (db) => {
        // A key is 256 random bits shown once when it is made; only its SHA-256 is kept (a hash of that much entropy
        // cannot be reversed or guessed), so neither this table nor a copy of the database gives a key back.
        db.exec(`
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                label TEXT NOT NULL UNIQUE,
                sha256 BLOB NOT NULL,
                created_at INTEGER NOT NULL
            );
        `);
    },
    // --- #23 items 4 and 7 (citations, the Isolation panel's documents): what each reply was given of them. ---
    (db) => {
        // One row per document (whole: `chunk_id` null) or retrieved chunk a reply was given, on its
        // route; `endpoint_host` for a cloud request. `cited`: shown under the reply (what its turn brought
        // or retrieved), not the earlier whole documents its history carried again. Ids only, no text.
        db.exec(`
            CREATE TABLE reply_sources (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                attachment_id INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
                chunk_id INTEGER REFERENCES attachment_chunks(id) ON DELETE CASCADE,
                route TEXT NOT NULL CHECK (route IN ('local', 'cloud')),
                endpoint_host TEXT,
                cited INTEGER NOT NULL CHECK (cited IN (0, 1)),
                created_at INTEGER NOT NULL
            );
            CREATE INDEX reply_sources_by_message ON reply_sources(message_id, id);
            CREATE INDEX reply_sources_by_attachment ON reply_sources(attachment_id);
            CREATE INDEX reply_sources_by_chunk ON reply_sources(chunk_id);
        `);
    },
    // --- #23 items 4-5 (document embeddings), appended after #29's and docpanel's: each chunk's vector, in the conversation's own rows of the same encrypted database. ---
    (db) => {
        // A chunk's embedding (little-endian float32, unit length) by the embedding model `model` (its
        // fingerprint): retrieval compares only vectors of the model in use. Gone with its chunk or its conversation.
        db.exec(`
            CREATE TABLE attachment_chunk_vectors (
                chunk_id INTEGER PRIMARY KEY REFERENCES attachment_chunks(id) ON DELETE CASCADE,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                model TEXT NOT NULL,
                vector BLOB NOT NULL
            );
            CREATE INDEX attachment_chunk_vectors_by_conversation ON attachment_chunk_vectors(conversation_id, model);
        `);
    },
    // --- #23 (retrieval ranks with each conversation's own statistics): its documents' term postings and chunk lengths. ---
    (db) => {
        // FTS5's bm25() counts rows and words over the whole index, every conversation's chunks: these
        // tables let retrieval count them over one conversation's. A retrieved document's row per term
        // (its chunks' places and counts, uint32 LE pairs) and its chunks' ids and lengths in terms.
        // Gone with the document or its conversation. Documents stored before are indexed here.
        db.exec(`
            CREATE TABLE attachment_terms (
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                term TEXT NOT NULL,
                attachment_id INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
                postings BLOB NOT NULL,
                PRIMARY KEY (conversation_id, term, attachment_id)
            ) WITHOUT ROWID;
            CREATE INDEX attachment_terms_by_attachment ON attachment_terms(attachment_id);
            CREATE TABLE attachment_chunk_lengths (
                attachment_id INTEGER PRIMARY KEY REFERENCES attachments(id) ON DELETE CASCADE,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                chunk_ids BLOB NOT NULL,
                lengths BLOB NOT NULL
            );
            CREATE INDEX attachment_chunk_lengths_by_conversation ON attachment_chunk_lengths(conversation_id, attachment_id);
        `);
        const retrieved = db.prepare("SELECT id, conversation_id FROM attachments WHERE mode = 'retrieved' ORDER BY id").all() as Array<{id: number, conversation_id: string}>;
        const chunksOf = db.prepare("SELECT id, text FROM attachment_chunks WHERE attachment_id = ? ORDER BY id");
        for (const attachment of retrieved)
            storeChunkTerms(db, attachment.conversation_id, attachment.id, chunksOf.all(attachment.id) as Array<{id: number, text: string}>);
    }
];

import type Database from "better-sqlite3";

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
    }
];

import type Database from "better-sqlite3-multiple-ciphers";
import * as z from "zod";
import type {ConversationId} from "../../common/types.js";
import type {KvSnapshotBinding, KvSnapshotHeader} from "./sealKvSnapshot.js";

export type StoredKvSnapshot = {header: KvSnapshotHeader, keyId: string, nonce: Buffer, sealed: Buffer, savedAt: number};

const BindingSchema = z.object({model: z.string(), context: z.string(), build: z.string()});

type Row = {binding_json: string, key_id: string, nonce: Buffer, sealed: Buffer, token_count: number, saved_at: number};

/**
 * The `kv_snapshots` table: at most one sealed snapshot per conversation, deleted with it (a
 * cascade; `secure_delete` zeroes the freed pages), by "Delete everything" and by a wipe.
 */
export class KvSnapshotStore {
    private readonly _db: Database.Database;

    public constructor(db: Database.Database) {
        this._db = db;
    }

    /** Replaces the conversation's snapshot; false when the conversation is gone (deleted meanwhile). */
    public put(conversationId: ConversationId, snapshot: StoredKvSnapshot): boolean {
        const {header} = snapshot;
        const binding: KvSnapshotBinding = {model: header.model, context: header.context, build: header.build};
        const exists = this._db.prepare("SELECT 1 FROM conversations WHERE id = ?").get(conversationId) != null;
        if (!exists)
            return false;
        this._db.prepare(`INSERT OR REPLACE INTO kv_snapshots (conversation_id, binding_json, key_id, nonce, sealed, token_count, saved_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)`).run(conversationId, JSON.stringify(binding), snapshot.keyId, snapshot.nonce, snapshot.sealed, header.tokenCount, snapshot.savedAt);
        return true;
    }

    /** The conversation's snapshot; null when it has none, or its row cannot be read (then it is removed). */
    public get(conversationId: ConversationId): StoredKvSnapshot | null {
        const row = this._db.prepare("SELECT binding_json, key_id, nonce, sealed, token_count, saved_at FROM kv_snapshots WHERE conversation_id = ?")
            .get(conversationId) as Row | undefined;
        if (row == null)
            return null;
        let binding: KvSnapshotBinding;
        try {
            binding = BindingSchema.parse(JSON.parse(row.binding_json));
        } catch {
            // A damaged binding: the snapshot's associated data cannot be rebuilt, it can never be restored.
            binding = {model: "", context: "", build: ""};
        }
        return {
            header: {...binding, tokenCount: row.token_count}, keyId: row.key_id,
            nonce: row.nonce, sealed: row.sealed, savedAt: row.saved_at
        };
    }

    public remove(conversationId: ConversationId): boolean {
        return this._db.prepare("DELETE FROM kv_snapshots WHERE conversation_id = ?").run(conversationId).changes > 0;
    }

    public has(conversationId: ConversationId): boolean {
        return this._db.prepare("SELECT 1 FROM kv_snapshots WHERE conversation_id = ?").get(conversationId) != null;
    }

    /** Removes the snapshots that can never be restored now: another model, settings, build or store key, or saved before `savedBefore`. */
    public removeStale(current: KvSnapshotBinding, keyId: string, savedBefore: number): number {
        const rows = this._db.prepare("SELECT conversation_id, binding_json, key_id, saved_at FROM kv_snapshots").all() as
            Array<{conversation_id: ConversationId, binding_json: string, key_id: string, saved_at: number}>;
        const bindingText = JSON.stringify(current);
        const stale = rows.filter((row) => row.binding_json !== bindingText || row.key_id !== keyId || row.saved_at < savedBefore);
        this._db.transaction(() => {
            for (const row of stale)
                this.remove(row.conversation_id);
        })();
        return stale.length;
    }
}

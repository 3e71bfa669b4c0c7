import type Database from "better-sqlite3-multiple-ciphers";
import {hashCanary} from "../../common/cloud/canary.js";
import type {CanaryBook, PlantedCanary} from "../../common/cloud/types.js";

/** Every canary this install planted, by SHA-256 hash only, in SQLite. */
export class CanaryLedger implements CanaryBook {
    private readonly _db: Database.Database;

    public constructor(db: Database.Database) {
        this._db = db;
    }

    public remember(canaries: readonly string[], planted: PlantedCanary) {
        const insert = this._db.prepare("INSERT OR IGNORE INTO canaries (hash, conversation_id, request_id, planted_at) VALUES (?, ?, ?, ?)");
        const now = Date.now();
        this._db.transaction(() => {
            for (const canary of canaries)
                insert.run(hashCanary(canary), planted.conversationId, planted.requestId, now);
        })();
    }

    public lookup(canaryHash: string): PlantedCanary | undefined {
        const row = this._db.prepare("SELECT conversation_id, request_id FROM canaries WHERE hash = ?").get(canaryHash) as
            {conversation_id: string | null, request_id: string} | undefined;
        return row == null ? undefined : {conversationId: row.conversation_id ?? "", requestId: row.request_id};
    }

    public count(conversationId?: string): number {
        const row = conversationId == null
            ? this._db.prepare("SELECT COUNT(*) AS n FROM canaries").get() as {n: number}
            : this._db.prepare("SELECT COUNT(*) AS n FROM canaries WHERE conversation_id = ?").get(conversationId) as {n: number};
        return row.n;
    }
}

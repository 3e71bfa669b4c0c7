import type Database from "better-sqlite3";
import type {AuditEvent, ConversationId} from "../../common/types.js";

export type AuditRecord = {
    kind: string,
    conversationId?: ConversationId | null,
    data?: Record<string, unknown>
};

export type AuditListener = (event: AuditEvent) => void;

/**
 * Append-only log of every isolation step. Records hold counts, ids and durations,
 * never prompt text, replies or secrets.
 */
export class AuditLog {
    private readonly _db: Database.Database | null;
    private readonly _listeners = new Set<AuditListener>();
    private _memoryId = 0;

    /** `db: null` keeps events in memory only (used by the self-test, which must not touch the user's database). */
    public constructor(db: Database.Database | null) {
        this._db = db;
    }

    public record({kind, conversationId = null, data = {}}: AuditRecord): AuditEvent {
        const at = Date.now();
        let id: number;
        if (this._db != null) {
            const result = this._db.prepare("INSERT INTO audit_events (conversation_id, at, kind, data_json) VALUES (?, ?, ?, ?)")
                .run(conversationId, at, kind, JSON.stringify(data));
            id = Number(result.lastInsertRowid);
        } else
            id = ++this._memoryId;

        const event: AuditEvent = {id, conversationId, at, kind, data};
        for (const listener of this._listeners)
            listener(event);

        return event;
    }

    public events({conversationId, kinds, limit = 500}: {conversationId?: ConversationId, kinds?: string[], limit?: number} = {}): AuditEvent[] {
        if (this._db == null)
            return [];

        const where: string[] = [];
        const params: unknown[] = [];
        if (conversationId != null) {
            where.push("conversation_id = ?");
            params.push(conversationId);
        }
        if (kinds != null && kinds.length > 0) {
            where.push(`kind IN (${kinds.map(() => "?").join(", ")})`);
            params.push(...kinds);
        }
        const rows = this._db.prepare(
            `SELECT * FROM audit_events ${where.length > 0 ? "WHERE " + where.join(" AND ") : ""} ORDER BY id DESC LIMIT ?`
        ).all(...params, limit) as Array<{id: number, conversation_id: string | null, at: number, kind: string, data_json: string}>;
        return rows.reverse().map((row) => ({
            id: row.id, conversationId: row.conversation_id, at: row.at, kind: row.kind, data: JSON.parse(row.data_json)
        }));
    }

    public onEvent(listener: AuditListener): () => void {
        this._listeners.add(listener);
        return () => this._listeners.delete(listener);
    }
}

import type Database from "better-sqlite3-multiple-ciphers";
import {EventRelay} from "lifecycle-utils";
import {type AuditDataOf, type AuditEvent, type AuditEventOf, auditEventFromRow, type AuditKind, isAuditEventOf} from "../../common/api/auditEvents.js";
import type {ConversationId} from "../../common/types.js";
import type {AuditLogOf} from "./AuditLogOf.js";

/** One event to record: its kind and the facts that kind records (see `auditEvents.ts`). */
export type AuditRecord<Kind extends AuditKind> = {
    kind: Kind,
    conversationId?: ConversationId | null,
    data: AuditDataOf<Kind>
};

/**
 * Which events `events` returns: of one conversation, of some kinds, the newest `limit`. Asked for
 * kinds, only rows that parse as those kinds come back; rows that do not parse come back, as
 * `unrecognised` events, only when no kinds are asked for (the whole trail, as it is shown).
 */
export type AuditQuery<Kind extends AuditKind = AuditKind> = {
    conversationId?: ConversationId,
    kinds?: Kind[],
    /** The newest this many, returned oldest first; null: all of them. Defaults to `500`. */
    limit?: number | null
};

/** How many events of each kind a conversation has, and how many of its cloud turns passed every check. */
export type AuditCounts = {
    byKind: Record<string, number>,
    /** `turn.cloud` events neither blocked nor flagged. */
    cloudChecksPassed: number
};

/**
 * Append-only log of every isolation step. Records hold counts, ids and durations,
 * never prompt text, replies or secrets.
 */
export class AuditLog implements AuditLogOf {
    private readonly _db: Database.Database | null;
    /** Every event as it is recorded (a throwing listener is logged, never stops the others or the record). */
    public readonly onEvent = new EventRelay<AuditEvent>();
    private _memoryId = 0;

    /** `db: null` keeps events in memory only (used by the self-test, which must not touch the user's database). */
    public constructor(db: Database.Database | null) {
        this._db = db;
    }

    /** A lone log holds every trail (an engine outside the core, the self-test); the core routes by `ConversationRouter`. */
    public auditOf(): AuditLog {
        return this;
    }

    public record<Kind extends AuditKind>({kind, conversationId = null, data}: AuditRecord<Kind>): AuditEventOf<Kind> {
        const at = Date.now();
        let id: number;
        if (this._db != null) {
            const result = this._db.prepare("INSERT INTO audit_events (conversation_id, at, kind, data_json) VALUES (?, ?, ?, ?)")
                .run(conversationId, at, kind, JSON.stringify(data));
            id = Number(result.lastInsertRowid);
        } else
            id = ++this._memoryId;

        const event = {id, conversationId, at, kind, data} as AuditEventOf<Kind>;
        this.onEvent.dispatchEvent(event);

        return event;
    }

    public events<Kind extends AuditKind>(query: AuditQuery<Kind> & {kinds: Kind[]}): Array<AuditEventOf<Kind>>;
    public events(query?: AuditQuery): AuditEvent[];
    public events({conversationId, kinds, limit = 500}: AuditQuery = {}): AuditEvent[] {
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
        ).all(...params, limit ?? -1) as Array<{id: number, conversation_id: string | null, at: number, kind: string, data_json: string}>;
        const events = rows.reverse().map((row) => auditEventFromRow({
            id: row.id, conversationId: row.conversation_id, at: row.at, kind: row.kind, data: JSON.parse(row.data_json) as unknown
        }));
        return kinds != null && kinds.length > 0 ? events.filter(isAuditEventOf(...kinds)) : events;
    }

    /** Counted in SQL over the whole trail, however long (not over the newest `events`). */
    public counts(conversationId: ConversationId): AuditCounts {
        if (this._db == null)
            return {byKind: {}, cloudChecksPassed: 0};

        const rows = this._db.prepare("SELECT kind, COUNT(*) AS count FROM audit_events WHERE conversation_id = ? GROUP BY kind")
            .all(conversationId) as Array<{kind: string, count: number}>;
        const {passed} = this._db.prepare(
            "SELECT COUNT(*) AS passed FROM audit_events WHERE conversation_id = ? AND kind = 'turn.cloud' " +
            "AND json_extract(data_json, '$.blocked') = 0 AND json_extract(data_json, '$.verdict') IS NULL"
        ).get(conversationId) as {passed: number};
        return {byKind: Object.fromEntries(rows.map((row) => [row.kind, row.count])), cloudChecksPassed: passed};
    }
}

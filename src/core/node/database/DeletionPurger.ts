import type Database from "better-sqlite3-multiple-ciphers";
import type {AuditLog} from "../audit/AuditLog.js";
import {SettingsStore} from "../settings/SettingsStore.js";

export type DeletionPurgerOptions = {
    /** How often a pending purge is retried while this process holds the database. Defaults to `2 s`. */
    retryIntervalMs?: number
};

/** `done`: the deleted text is gone from the database file, its WAL and its shared-memory index; `pending`: not yet. */
export type PurgeState = "done" | "pending";

/** What made a purge attempt. */
export type PurgeTrigger = "deletion" | "timer" | "write" | "open" | "close";

type PendingRecord = {since: number, deletions: number};

export const defaultPurgeRetryIntervalMs = 2000;
/** The settings row that says a purge is pending: seen by every process that opens the database. */
const pendingKey = "store.purgePending";
const pendingWhat = "another connection holds a read snapshot of the database: the deleted text stays in the database file and its WAL until that reader is done";

/**
 * Finishes what a deletion started: with `secure_delete` the deleted rows are zeroed in the pages
 * the deletion wrote, but those pages reach the database file, and the old ones leave the WAL,
 * only when a checkpoint copies them and truncates the WAL. A reader that holds an older snapshot
 * (another connection's read transaction, in this process or another) blocks that checkpoint.
 * The purge is then recorded as pending (`deletion.pending`, and a settings row every process
 * sees) and retried without blocking: on a timer, at the next write, when a database is opened
 * and at close; `deletion.purged` is recorded once it went through. The timer runs in every
 * process that holds the database for writing, not only in the one that deleted: a deletion by a
 * process that has exited since (`cleanroom conversations delete` while the app was reading) is
 * finished by whichever Cleanroom is still there once the reader is done, with no write needed.
 */
export class DeletionPurger {
    private readonly _db: Database.Database;
    private readonly _audit: AuditLog;
    private readonly _settings: SettingsStore;
    private readonly _retryIntervalMs: number;
    private _timer: NodeJS.Timeout | null = null;
    private _disposed = false;

    public constructor(db: Database.Database, audit: AuditLog, {retryIntervalMs = defaultPurgeRetryIntervalMs}: DeletionPurgerOptions = {}) {
        this._db = db;
        this._audit = audit;
        this._settings = new SettingsStore(db);
        this._retryIntervalMs = retryIntervalMs;
        if (!db.readonly && db.name !== ":memory:") {
            this.tryPurge("open");
            this._startTimer();
        }
    }

    /** True while deleted text may still be on disk (as far as this database records it). */
    public get pending(): boolean {
        return this._writable() && this._pendingRecord() != null;
    }

    /** Call once a deletion has committed: checkpoints now, or records the purge as pending and keeps trying. */
    public afterDeletion(): PurgeState {
        if (!this._writable())
            return "done";
        if (this._checkpoint())
            return this.tryPurge("deletion") ?? "done";

        const previous = this._pendingRecord();
        const record: PendingRecord = {since: previous?.since ?? Date.now(), deletions: (previous?.deletions ?? 0) + 1};
        this._settings.set(pendingKey, record);
        this._audit.record({kind: "deletion.pending", data: {what: pendingWhat, deletions: record.deletions}});
        this._startTimer();
        return "pending";
    }

    /** Called after other writes: a pending purge (also one recorded by another process) is retried. */
    public afterWrite(): void {
        try {
            if (this._writable() && !this._db.inTransaction && this._pendingRecord() != null)
                this.tryPurge("write");
        } catch {
            // a busy database: the timer and the next write try again; the write itself went through
        }
    }

    /**
     * Retries a pending purge without waiting on other connections. Returns the state, or null
     * when none was pending.
     */
    public tryPurge(trigger: PurgeTrigger): PurgeState | null {
        if (!this._writable() || this._db.inTransaction)
            return this._writable() && this._pendingRecord() != null ? "pending" : null;
        const record = this._pendingRecord();
        if (record == null)
            return null;
        if (!this._checkpoint()) {
            this._startTimer();
            return "pending";
        }

        this._settings.delete(pendingKey);
        this._audit.record({kind: "deletion.purged", data: {trigger, deletions: record.deletions, pendingMs: Date.now() - record.since}});
        // The two rows just written hold no deleted text; checkpoint them too so the WAL is empty again.
        this._checkpoint();
        return "done";
    }

    /** One last attempt (the database is about to close), then no more retries from this process. */
    public dispose(): void {
        if (this._disposed)
            return;
        this.tryPurge("close");
        this._disposed = true;
        this._stopTimer();
    }

    public [Symbol.dispose]() {
        this.dispose();
    }

    /** `wal_checkpoint(TRUNCATE)` with no busy wait: true when it completed (the WAL is empty). */
    private _checkpoint(): boolean {
        const busyTimeout = this._db.pragma("busy_timeout", {simple: true}) as number;
        this._db.pragma("busy_timeout = 0");
        try {
            const [result] = this._db.pragma("wal_checkpoint(TRUNCATE)") as Array<{busy: number, log: number, checkpointed: number}>;
            return result == null || result.busy === 0;
        } finally {
            this._db.pragma(`busy_timeout = ${busyTimeout}`);
        }
    }

    private _pendingRecord(): PendingRecord | null {
        return this._settings.get<PendingRecord>(pendingKey) ?? null;
    }

    private _writable() {
        return !this._disposed && this._db.open && !this._db.readonly;
    }

    private _startTimer() {
        if (this._timer != null || this._disposed)
            return;
        this._timer = setInterval(() => {
            if (!this._db.open) {
                this._stopTimer();
                return;
            }
            try {
                if (this._pendingRecord() != null)
                    this.tryPurge("timer");
            } catch {
                // a busy database: the next tick tries again
            }
        }, this._retryIntervalMs);
        this._timer.unref();
    }

    private _stopTimer() {
        if (this._timer != null)
            clearInterval(this._timer);
        this._timer = null;
    }
}

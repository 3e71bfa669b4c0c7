import fs from "node:fs";
import {writeFileDurably} from "./durableFiles.js";
import {UnlockBackoffError} from "./UnlockBackoffError.js";

export type UnlockBackoffOptions = {
    /**
     * Where the count of wrong passphrases and the time of the next allowed try are kept (JSON, mode
     * 0600), so that ending the process does not reset them; null keeps them in memory only.
     * Defaults to null.
     */
    file?: string | null,
    /** The wait after the first wrong passphrase; each further one in a row doubles it. Defaults to `1 s`. */
    firstWaitMs?: number,
    /** The longest wait. Defaults to `5 min`. */
    maxWaitMs?: number
};

export const defaultFirstUnlockWaitMs = 1000;
export const defaultMaxUnlockWaitMs = 5 * 60_000;

/** Where the back-off of a database is kept: beside it (no secret in it, removed by `wipe`). */
export const unlockBackoffFile = (database: string) => `${database}.unlock-backoff`;

type BackoffRecord = {failures: number, retryAt: number};

/**
 * The unlock's back-off: after a wrong passphrase, the next try is refused unread (UNLOCK_BACKOFF,
 * with `retryAfterMs`) for 1 s, then 2 s, 4 s … doubling with each wrong passphrase in a row, up to
 * 5 minutes; a right one resets it. Kept in a file when given, read at each check, so that killing
 * the process (or a second process on the same database) does not reset it. Times are the wall
 * clock (`Date.now()`); after the clock is set back, the wait starts again from then, never longer
 * than its length.
 */
export class UnlockBackoff {
    private readonly _file: string | null;
    private readonly _firstWaitMs: number;
    private readonly _maxWaitMs: number;
    private _record: BackoffRecord = {failures: 0, retryAt: 0};

    public constructor({file = null, firstWaitMs = defaultFirstUnlockWaitMs, maxWaitMs = defaultMaxUnlockWaitMs}: UnlockBackoffOptions = {}) {
        this._file = file;
        this._firstWaitMs = firstWaitMs;
        this._maxWaitMs = maxWaitMs;
    }

    /** How long until the next try is allowed (0: now). */
    public retryAfterMs(): number {
        const {failures, retryAt} = this._load();
        if (failures === 0)
            return 0;
        const now = Date.now();
        if (retryAt - now > this._waitAfter(failures))
            // A clock set back (or a record from a clock ahead): the wait runs again, from now, never longer.
            this._save({failures, retryAt: now + this._waitAfter(failures)});
        return Math.max(0, this._record.retryAt - now);
    }

    /** Throws UNLOCK_BACKOFF while a wait is running. */
    public ensureMayTry(): void {
        const retryAfterMs = this.retryAfterMs();
        if (retryAfterMs > 0)
            throw new UnlockBackoffError(retryAfterMs, this._record.failures);
    }

    /** A wrong passphrase: the wait doubles. Returns the wait before the next try. */
    public recordFailure(): number {
        const failures = this._load().failures + 1;
        const waitMs = this._waitAfter(failures);
        this._save({failures, retryAt: Date.now() + waitMs});
        return waitMs;
    }

    /** The right passphrase: no wait any more. */
    public recordSuccess(): void {
        if (this._load().failures === 0)
            return;
        this._record = {failures: 0, retryAt: 0};
        if (this._file != null)
            fs.rmSync(this._file, {force: true});
    }

    private _waitAfter(failures: number) {
        return Math.min(this._maxWaitMs, this._firstWaitMs * 2 ** Math.min(failures - 1, 30));
    }

    private _load(): BackoffRecord {
        if (this._file == null)
            return this._record;
        try {
            const parsed = JSON.parse(fs.readFileSync(this._file, "utf8")) as Partial<BackoffRecord>;
            if (Number.isSafeInteger(parsed.failures) && parsed.failures! >= 0 && Number.isFinite(parsed.retryAt))
                this._record = {failures: parsed.failures!, retryAt: parsed.retryAt!};
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT")
                this._record = {failures: 0, retryAt: 0};
            // unreadable or damaged: keep what this process knows
        }
        return this._record;
    }

    private _save(record: BackoffRecord) {
        this._record = record;
        if (this._file != null)
            writeFileDurably(this._file, JSON.stringify(record));
    }
}

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import {ensureDirectory} from "../../paths/ensureDirectory.js";
import {createPrivateFile} from "../keys/durableFiles.js";
import {realDatabasePath} from "../realDatabasePath.js";
import {DatabaseInUseError} from "./DatabaseInUseError.js";
import {lockHolders} from "./lockHolders.js";
import {sleepBeforeRetry} from "./sleepSync.js";

/*
 * One writer at a time, across processes. Every process that has the database open holds a SHARED
 * lock on `<database>.lock` for as long as it does; a switch (re-key, wipe, delete everything, a
 * migration) takes an EXCLUSIVE one for its whole length, tried without waiting, so it is refused
 * while another process has the database open, and an opener is kept out while a switch runs.
 *
 * Why SQLite's own locks on a side file (measured on Linux with this SQLite build):
 * - Node has no flock; SQLite locks files with fcntl (LockFileEx on Windows), which the OS drops
 *   when the process dies: kill -9 never leaves the database locked. A read transaction on an
 *   empty SQLite file is a SHARED lock (/proc/locks shows it), `BEGIN EXCLUSIVE` with no busy
 *   timeout fails at once with SQLITE_BUSY while any other process holds one, a failed attempt
 *   leaves nothing behind (others still get SHARED), and ROLLBACK writes nothing: the file stays
 *   empty, so it never holds anything of the user's.
 * - Not the database file itself: a WAL connection does keep a SHARED lock on it while open, but
 *   fcntl locks belong to the process, and closing any descriptor of the file drops them all
 *   (measured: an fs.openSync/closeSync of the file releases the connection's lock); Cleanroom opens
 *   the database outside SQLite (isPlainDatabase, fsync, zeroing), a re-key renames another file
 *   over it, and a wipe has no key to open it. Nothing but this module opens the lock files.
 * - Within one process the lock is the process's: its connections share one hold, and its own
 *   switches (web mode's app.setPassphrase, delete everything, a migration at open) let go of that
 *   hold and take it back. So that no other switch can slip in between, every switch first takes
 *   `<database>.lock-switch` exclusively: two switches never run at once, and the process that holds
 *   the gate is the only one that may take `.lock` exclusively.
 * - A wipe removes both files while it holds them; whoever locked a file that is no longer the one
 *   its path names (checked by inode after locking) starts again on the new one.
 */

export type DatabaseLockFiles = {
    /** SHARED for each process that has the database open; EXCLUSIVE for a switch. */
    hold: string,
    /** EXCLUSIVE for a switch, taken before `hold`: one switch at a time. */
    gate: string
};

export const databaseLockFiles = (database: string): DatabaseLockFiles => ({hold: `${database}.lock`, gate: `${database}.lock-switch`});

/** How long an open waits for another process's switch to finish before it is refused. */
export const defaultSwitchWaitMs = 5_000;

type LockedFile = {db: Database.Database, file: string, ino: bigint};

const locks = new Map<string, DatabaseLock>();

/**
 * This process's lock on one database file (see the comment above): `hold` while a connection has
 * it open, `exclusively` for a switch. One per file per process (`DatabaseLock.of`).
 */
export class DatabaseLock {
    public readonly database: string;
    public readonly files: DatabaseLockFiles;
    private _holds = 0;
    private _switchDepth = 0;
    private _hold: LockedFile | null = null;
    private _gate: LockedFile | null = null;
    private _removeFiles = false;

    private constructor(database: string) {
        this.database = database;
        this.files = databaseLockFiles(database);
    }

    public static of(database: string): DatabaseLock {
        const file = realDatabasePath(database);
        let lock = locks.get(file);
        if (lock == null) {
            lock = new DatabaseLock(file);
            locks.set(file, lock);
        }
        return lock;
    }

    /** Whether this process is switching the database now (inside `exclusively`). */
    public get switching(): boolean {
        return this._switchDepth > 0;
    }

    /**
     * Holds the database for this process until the returned function is called (once per
     * connection). Waits until `deadline` for another process's switch to end, then throws
     * `DatabaseInUseError` ("switching"). Inside this process's own switch it only counts.
     */
    public hold({deadline = Date.now() + defaultSwitchWaitMs}: {deadline?: number} = {}): () => void {
        if (this._holds === 0 && this._switchDepth === 0) {
            const locked = lockFile(this.files.hold, "shared", deadline);
            if (locked == null)
                throw new DatabaseInUseError(this.database, "switching", "open", this._switchers());
            this._hold = locked;
        }
        this._holds++;
        let released = false;
        return () => {
            if (released)
                return;
            released = true;
            this._holds--;
            if (this._holds === 0 && this._switchDepth === 0)
                this._hold = closeLock(this._hold);
        };
    }

    /**
     * Runs `work` with the database to this process alone: refused at once (`DatabaseInUseError`,
     * nothing run) while another process has it open or is switching it. Nested calls, and
     * connections this process opens meanwhile, share the one exclusive lock; connections still
     * open at the end keep the database held (shared again).
     */
    public exclusively<T>(operation: string, work: () => T): T {
        this._beginSwitch(operation);
        try {
            return work();
        } finally {
            this._endSwitch();
        }
    }

    /** `exclusively` for work that awaits: the lock is held until it settles. */
    public async exclusivelyAsync<T>(operation: string, work: () => Promise<T>): Promise<T> {
        this._beginSwitch(operation);
        try {
            return await work();
        } finally {
            this._endSwitch();
        }
    }

    /** Inside `exclusively`: the lock files go too when the switch ends (a wipe), removed while still held. */
    public removeFilesAtEnd(): void {
        if (this._switchDepth === 0)
            throw new Error("DatabaseLock.removeFilesAtEnd: only inside exclusively()");
        this._removeFiles = true;
    }

    private _beginSwitch(operation: string) {
        if (this._switchDepth > 0) {
            this._switchDepth++;
            return;
        }
        ensureDirectory(path.dirname(this.database), {what: "the database"});
        const gate = lockFile(this.files.gate, "exclusive", 0);
        if (gate == null)
            throw new DatabaseInUseError(this.database, "switching", operation, this._switchers());
        // This process's own hold is let go of for the exclusive lock, and taken back if that is
        // refused: no other switch can come in between, since it would need the gate first.
        const held = this._hold;
        let locked: LockedFile | null;
        if (held != null) {
            held.db.exec("ROLLBACK");
            locked = tryLock(held, "exclusive") ? held : null;
        } else
            locked = lockFile(this.files.hold, "exclusive", 0);
        if (locked == null) {
            const holders = lockHolders(this.files.hold);
            if (held != null && !tryLock(held, "shared"))
                throw new Error("DatabaseLock: this process's hold could not be taken back while it held the gate");
            closeLock(gate);
            throw new DatabaseInUseError(this.database, "open", operation, holders);
        }
        this._hold = locked;
        this._gate = gate;
        this._switchDepth = 1;
    }

    private _endSwitch() {
        if (--this._switchDepth > 0)
            return;
        const hold = this._hold!;
        const removeFiles = this._removeFiles && this._holds === 0;
        this._removeFiles = false;
        if (removeFiles)
            for (const file of [this.files.hold, this.files.gate])
                removeLockFile(file);
        hold.db.exec("ROLLBACK");
        if (this._holds > 0 && !removeFiles) {
            if (!tryLock(hold, "shared"))
                throw new Error("DatabaseLock: this process's hold could not be taken back while it held the gate");
        } else
            this._hold = closeLock(hold);
        this._gate = closeLock(this._gate);
    }

    /** Who is switching: the holder of the gate, else of an exclusive `.lock`. */
    private _switchers() {
        const gateHolders = lockHolders(this.files.gate);
        return gateHolders.length > 0 ? gateHolders : lockHolders(this.files.hold);
    }
}

/** Removes a lock file (a wipe), while it is locked; where the OS will not remove an open file (Windows), it stays: it holds nothing. */
function removeLockFile(file: string) {
    try {
        fs.rmSync(file, {force: true});
    } catch {
        // left in place, empty
    }
}

/**
 * Locks `file` (created empty, mode 0600, when absent), retrying until `deadline`; null when it
 * could not. A file removed or replaced meanwhile (a wipe) is let go of and the new one tried.
 */
function lockFile(file: string, mode: "shared" | "exclusive", deadline: number): LockedFile | null {
    for (;;) {
        const opened = openLockFile(file);
        if (opened != null) {
            if (tryLock(opened, mode)) {
                if (fs.statSync(file, {bigint: true, throwIfNoEntry: false})?.ino === opened.ino)
                    return opened;
                opened.db.exec("ROLLBACK");
            }
            opened.db.close();
        }
        if (Date.now() >= deadline)
            return null;
        sleepBeforeRetry();
    }
}

function openLockFile(file: string): LockedFile | null {
    try {
        // Created here rather than by SQLite, so that it is private from the start. A new file: no lock of ours is on it, closing it drops none.
        createPrivateFile(file);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
            throw error;
    }
    const stat = fs.statSync(file, {bigint: true, throwIfNoEntry: false});
    if (stat == null)
        return null;
    let db: Database.Database;
    try {
        db = new Database(file, {fileMustExist: true});
    } catch (error) {
        if ((error as {code?: unknown}).code === "SQLITE_CANTOPEN")
            return null; // removed meanwhile
        throw error;
    }
    db.pragma("busy_timeout = 0");
    return {db, file, ino: stat.ino};
}

/** A read transaction is a SHARED lock; `BEGIN EXCLUSIVE` an EXCLUSIVE one. False (and nothing held) when another process's lock is in the way. */
function tryLock(locked: LockedFile, mode: "shared" | "exclusive"): boolean {
    try {
        if (mode === "exclusive")
            locked.db.exec("BEGIN EXCLUSIVE");
        else {
            locked.db.exec("BEGIN");
            locked.db.prepare("SELECT count(*) FROM sqlite_master").get();
        }
        return true;
    } catch (error) {
        if (locked.db.inTransaction)
            locked.db.exec("ROLLBACK");
        if ((error as {code?: unknown}).code === "SQLITE_BUSY")
            return false;
        throw error;
    }
}

function closeLock(locked: LockedFile | null): null {
    if (locked != null) {
        if (locked.db.inTransaction)
            locked.db.exec("ROLLBACK");
        locked.db.close();
    }
    return null;
}

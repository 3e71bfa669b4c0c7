import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import {CleanroomError} from "../../common/errors.js";
import {ensureDirectory, describeErrno} from "../paths/ensureDirectory.js";
import {StoragePathError} from "../paths/StoragePathError.js";
import {createPrivateFile} from "./keys/durableFiles.js";
import {openKeyedDatabase, openSwitchesFile} from "./keys/openKeyedDatabase.js";
import {DatabaseInUseError} from "./lock/DatabaseInUseError.js";
import {DatabaseLock, defaultSwitchWaitMs} from "./lock/DatabaseLock.js";
import {sleepBeforeRetry} from "./lock/sleepSync.js";
import type {StoreKeySource} from "./keys/types.js";
import {migrations} from "./migrations.js";

export type OpenDatabaseOptions = {
    /** Defaults to `false`. */
    readonly?: boolean,
    /** What opens the encrypted database. Defaults to `storeKeyFromEnvironment()` (`CLEANROOM_PASSPHRASE` when set, else the database's key file). */
    key?: StoreKeySource
};

/** The key source of a front end without a keychain (CLI, web mode, tests): `CLEANROOM_PASSPHRASE` when set and not empty. */
export function storeKeyFromEnvironment(): StoreKeySource {
    const passphrase = process.env.CLEANROOM_PASSPHRASE;
    return passphrase != null && passphrase !== "" ? {passphrase} : {};
}

const what = "the database";

/**
 * Opens (creating when absent) a Cleanroom database: encrypted (SQLCipher pages, see
 * `openKeyedDatabase`; a plain one from before is encrypted in place first), WAL, foreign keys,
 * secure delete, temporary tables in memory only, migrations applied. Any reply left `streaming` by a process that died is marked
 * `interrupted` here, since nobody is producing it any more. A path that cannot hold a
 * database (under /proc or /sys, through a file, a folder that cannot be created, a folder
 * where the file should be) fails at once with `STORAGE_PATH_UNUSABLE`, naming the reason.
 *
 * The connection holds the database for this process until it is closed (`DatabaseLock`): no
 * other process can re-key, wipe or migrate it meanwhile. While another process is switching it,
 * the open waits up to `defaultSwitchWaitMs`, then fails with `DATABASE_IN_USE`. Creating,
 * encrypting or migrating it here is a switch too: it waits as long for other processes to
 * close it, then fails with `DATABASE_IN_USE` naming them.
 */
export function openDatabase(file: string, {readonly = false, key = storeKeyFromEnvironment()}: OpenDatabaseOptions = {}): Database.Database {
    if (file === ":memory:") {
        const db = configure(new Database(file, {readonly}));
        if (!readonly)
            applyMigrations(db);
        return finishOpen(db, readonly, () => undefined);
    }
    const resolved = path.resolve(file);
    checkDatabasePath(resolved);
    const lock = DatabaseLock.of(resolved);
    const deadline = Date.now() + defaultSwitchWaitMs;
    for (;;) {
        const release = lock.hold({deadline});
        try {
            if (!openSwitchesFile(resolved, key, readonly)) {
                const db = configure(openDatabaseFile(resolved, readonly, key));
                let pending: boolean;
                try {
                    pending = !readonly && migrationsPending(db);
                } catch (error) {
                    db.close();
                    throw error;
                }
                if (!pending)
                    return finishOpen(db, readonly, release);
                db.close();
            }
        } catch (error) {
            release();
            throw error;
        }
        release();
        try {
            // Created, encrypted, settled or migrated with the database to itself; the connection then holds it as any other.
            return lock.exclusively("create, encrypt or migrate the schema of", () => {
                const held = lock.hold();
                try {
                    const db = configure(openDatabaseFile(resolved, readonly, key));
                    applyMigrations(db);
                    return finishOpen(db, readonly, held);
                } catch (error) {
                    held();
                    throw error;
                }
            });
        } catch (error) {
            if (!(error instanceof DatabaseInUseError) || Date.now() >= deadline)
                throw error;
        }
        // Another process has it open, or is switching it: perhaps only opening it, or doing this very switch.
        sleepBeforeRetry();
    }
}

function configure(db: Database.Database): Database.Database {
    try {
        // Sorts and temporary tables never spill to a (plain) temp file.
        db.pragma("temp_store = MEMORY");
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        db.pragma("foreign_keys = ON");
        // Deleted rows are overwritten with zeros rather than left in free pages.
        db.pragma("secure_delete = ON");
        db.pragma("busy_timeout = 5000");
        return db;
    } catch (error) {
        db.close();
        throw error;
    }
}

/** Marks replies left streaming (writable only), and ties the process's hold of the database to the connection: released when it closes. */
function finishOpen(db: Database.Database, readonly: boolean, release: () => void): Database.Database {
    try {
        if (!readonly)
            db.prepare("UPDATE messages SET status = 'interrupted', updated_at = ? WHERE status = 'streaming'").run(Date.now());
    } catch (error) {
        db.close();
        throw error;
    }
    const close = db.close.bind(db);
    db.close = () => {
        try {
            return close();
        } finally {
            release();
        }
    };
    return db;
}

function checkDatabasePath(file: string) {
    ensureDirectory(path.dirname(file), {what});
    const stat = fs.statSync(file, {throwIfNoEntry: false});
    if (stat != null && !stat.isFile())
        throw new StoragePathError(what, file, stat.isDirectory() ? "it is a folder, not a database file" : "it is not a regular file");
}

function openDatabaseFile(file: string, readonly: boolean, key: StoreKeySource): Database.Database {
    try {
        if (!readonly && !fs.existsSync(file))
            createDatabaseFile(file);
        return openKeyedDatabase(file, key, readonly).db;
    } catch (error) {
        if (error instanceof CleanroomError)
            throw error;
        throw new StoragePathError(what, file, `SQLite cannot open it (${describeErrno(error)})`, {}, error);
    }
}

/** A new database file, 0600 before SQLite writes a byte (its -wal and -shm then get the same mode). */
function createDatabaseFile(file: string) {
    try {
        createPrivateFile(file);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
            throw error;
        // Another process created it meanwhile: SQLite opens theirs.
    }
}

/** Whether the schema needs migrations; throws for a schema newer than this build knows. */
function migrationsPending(db: Database.Database): boolean {
    const current = db.pragma("user_version", {simple: true}) as number;
    if (current > migrations.length)
        throw new CleanroomError("DATABASE_TOO_NEW", `The database was written by a newer Cleanroom (schema ${current}, this build knows ${migrations.length}): update Cleanroom to open it.`,
            {schema: current, known: migrations.length});
    return current < migrations.length;
}

function applyMigrations(db: Database.Database) {
    migrationsPending(db);
    const current = db.pragma("user_version", {simple: true}) as number;

    for (let version = current; version < migrations.length; version++) {
        db.transaction(() => {
            migrations[version]!(db);
            db.pragma(`user_version = ${version + 1}`);
        })();
    }
}

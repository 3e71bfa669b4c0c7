import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import {CleanroomError} from "../../common/errors.js";
import {ensureDirectory, describeErrno} from "../storage/ensureDirectory.js";
import {StoragePathError} from "../storage/StoragePathError.js";
import {createPrivateFile} from "./keys/durableFiles.js";
import {openKeyedDatabase} from "./keys/openKeyedDatabase.js";
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
 */
export function openDatabase(file: string, {readonly = false, key = storeKeyFromEnvironment()}: OpenDatabaseOptions = {}): Database.Database {
    const db = file === ":memory:" ? new Database(file, {readonly}) : openDatabaseFile(path.resolve(file), readonly, key);
    // Sorts and temporary tables never spill to a (plain) temp file.
    db.pragma("temp_store = MEMORY");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    // Deleted rows are overwritten with zeros rather than left in free pages.
    db.pragma("secure_delete = ON");
    db.pragma("busy_timeout = 5000");

    if (!readonly) {
        applyMigrations(db);
        db.prepare("UPDATE messages SET status = 'interrupted', updated_at = ? WHERE status = 'streaming'").run(Date.now());
    }

    return db;
}

function openDatabaseFile(file: string, readonly: boolean, key: StoreKeySource): Database.Database {
    ensureDirectory(path.dirname(file), {what});
    const stat = fs.statSync(file, {throwIfNoEntry: false});
    if (stat != null && !stat.isFile())
        throw new StoragePathError(what, file, stat.isDirectory() ? "it is a folder, not a database file" : "it is not a regular file");
    try {
        if (stat == null && !readonly)
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

function applyMigrations(db: Database.Database) {
    const current = db.pragma("user_version", {simple: true}) as number;
    if (current > migrations.length)
        throw new Error(`The database was written by a newer Cleanroom (schema ${current}, this build knows ${migrations.length}).`);

    for (let version = current; version < migrations.length; version++) {
        db.transaction(() => {
            migrations[version]!(db);
            db.pragma(`user_version = ${version + 1}`);
        })();
    }
}

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import {ensureDirectory, describeErrno} from "../storage/ensureDirectory.js";
import {StoragePathError} from "../storage/StoragePathError.js";
import {migrations} from "./migrations.js";

export type OpenDatabaseOptions = {
    /** Defaults to `false`. */
    readonly?: boolean
};

const what = "the database";

/**
 * Opens (creating when absent) a Cleanroom database: WAL, foreign keys, secure delete,
 * migrations applied. Any reply left `streaming` by a process that died is marked
 * `interrupted` here, since nobody is producing it any more. A path that cannot hold a
 * database (under /proc or /sys, through a file, a folder that cannot be created, a folder
 * where the file should be) fails at once with `STORAGE_PATH_UNUSABLE`, naming the reason.
 */
export function openDatabase(file: string, {readonly = false}: OpenDatabaseOptions = {}): Database.Database {
    const db = file === ":memory:" ? new Database(file, {readonly}) : openDatabaseFile(path.resolve(file), readonly);
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

function openDatabaseFile(file: string, readonly: boolean): Database.Database {
    ensureDirectory(path.dirname(file), {what});
    const stat = fs.statSync(file, {throwIfNoEntry: false});
    if (stat != null && !stat.isFile())
        throw new StoragePathError(what, file, stat.isDirectory() ? "it is a folder, not a database file" : "it is not a regular file");
    try {
        return new Database(file, {readonly});
    } catch (error) {
        throw new StoragePathError(what, file, `SQLite cannot open it (${describeErrno(error)})`, {}, error);
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

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import {migrations} from "./migrations.js";

export type OpenDatabaseOptions = {
    /** Defaults to `false`. */
    readonly?: boolean
};

/**
 * Opens (creating when absent) a Cleanroom database: WAL, foreign keys, secure delete,
 * migrations applied. Any reply left `streaming` by a process that died is marked
 * `interrupted` here, since nobody is producing it any more.
 */
export function openDatabase(file: string, {readonly = false}: OpenDatabaseOptions = {}): Database.Database {
    if (file !== ":memory:")
        fs.mkdirSync(path.dirname(path.resolve(file)), {recursive: true, mode: 0o700});

    const db = new Database(file, {readonly});
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

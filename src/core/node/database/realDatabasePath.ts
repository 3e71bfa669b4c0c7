import fs from "node:fs";
import path from "node:path";

/**
 * One name per database file: its real path where it exists (a `--db` that is a symbolic link names
 * the database it leads to), else its folder's real path and its name, else the absolute path.
 * Everything kept beside a database (SQLite's -wal and -shm, the key file, the lock files, a
 * re-key's switch files) goes beside the real file, as SQLite puts its own; and a re-key's rename
 * replaces the database, never the link to it.
 */
export function realDatabasePath(database: string): string {
    if (database === ":memory:")
        return database;

    const file = path.resolve(database);
    for (const resolve of [() => fs.realpathSync(file), () => path.join(fs.realpathSync(path.dirname(file)), path.basename(file))]) {
        try {
            return resolve();
        } catch {
            // not there yet: try the folder, then the name as given
        }
    }
    return file; // no folder yet: nothing links to it
}

import type Database from "better-sqlite3-multiple-ciphers";
import {realDatabasePath} from "../core/node/database/realDatabasePath.js";
import {reportError, reportWarning} from "./output.js";

export type DatabaseCliOptions = {db?: string, json?: boolean};

/**
 * Opens the database for a command that needs no model (`--db`, else the default one; its key as
 * every command finds it), runs `work`, and closes it; an error is reported (as JSON with `--json`).
 * SQLite is loaded only now, so that `--help` never loads it.
 */
export async function withDatabase(options: DatabaseCliOptions, work: (db: Database.Database) => void | Promise<void>) {
    let db: Database.Database | undefined;
    try {
        const [{openDatabase}, {defaultDatabasePath}, {terminalStoreKey}] = await Promise.all([
            import("../core/node/database/openDatabase.js"), import("../core/node/paths/appPaths.js"), import("../core/node/host/terminalStoreKey.js")
        ]);
        const database = realDatabasePath(options.db ?? defaultDatabasePath());
        db = openDatabase(database, {key: await terminalStoreKey(database, (warning) => reportWarning(warning, options.json === true))});
        await work(db);
    } catch (error) {
        reportError(error, options.json === true);
    } finally {
        db?.close();
    }
}

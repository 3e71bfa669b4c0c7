import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3-multiple-ciphers";
import type {DeletionPurger} from "./DeletionPurger.js";
import {zeroAndRemove} from "./keys/durableFiles.js";
import {envelopeFile, nextEnvelopeFile} from "./keys/keyEnvelope.js";
import {switchFiles} from "./keys/openKeyedDatabase.js";
import {unlockBackoffFile} from "./keys/UnlockBackoff.js";
import {DatabaseLock} from "./lock/DatabaseLock.js";

export type WipeOptions = {
    /** The database file. */
    database: string,
    /** The models folder, whose `registry.json` (the registered-model records) goes too. Defaults to none. */
    modelsDir?: string,
    /** Also removes the model files downloaded into `modelsDir` (never files registered in place elsewhere). Defaults to `false`. */
    removeModelFiles?: boolean
};

/** One path `wipeStore` looked at: whether it was there and was removed, and whether anything remains there now. */
export type WipeCheck = {path: string, what: string, removed: boolean, remains: boolean};

export type WipeReport = {
    checks: WipeCheck[],
    /** Model files left in place (not asked to remove, or registered outside the models folder). */
    modelFilesKept: number,
    /** True when nothing it checked remains. */
    clean: boolean
};

/**
 * "Delete everything": the database (conversations, messages, audit trail, fingerprints and canary
 * hashes, settings), its WAL, shared-memory index and journal, its key files, any file a migration
 * or re-key left, and the registered-model records, each overwritten with zeros before it is
 * removed. Then each path is checked again, and the report says what was there and what remains.
 * It runs with the database to this process alone (`DatabaseLock`): refused with
 * `DATABASE_IN_USE`, nothing removed, while another process has it open (its file would live on
 * there, and that process would go on writing into a new one); the lock files go last.
 */
export function wipeStore({database, modelsDir, removeModelFiles = false}: WipeOptions): WipeReport {
    const wipe = () => {
        const {targets, modelFilesKept} = wipeTargets({database, modelsDir, removeModelFiles});
        const checks = removeTargets(targets);
        return {checks, modelFilesKept, clean: checks.every((check) => !check.remains)};
    };
    // No folder, no database: nothing can hold it, and locking would create the folder.
    if (!fs.existsSync(path.dirname(path.resolve(database))))
        return wipe();
    const lock = DatabaseLock.of(database);
    return lock.exclusively("wipe", () => {
        lock.removeFilesAtEnd();
        return wipe();
    });
}

type WipeTarget = {path: string, what: string, live?: boolean};

/**
 * What `wipeStore` removes: the database's own files first (`live`), then what is left around it.
 * A `database` that is a symbolic link is followed: the file it points to is wiped with the files
 * SQLite keeps beside it (-wal, -shm), then the link itself goes, with what was kept beside the
 * link's name (the key file is looked for there); no link is ever written through.
 */
function wipeTargets({database, modelsDir, removeModelFiles = false}: WipeOptions) {
    const given = path.resolve(database);
    const file = fs.lstatSync(given, {throwIfNoEntry: false})?.isSymbolicLink() === true ? linkTarget(given) : given;
    const targets = databaseTargets(file);
    if (file !== given) {
        targets.push({path: given, what: `symbolic link to the database (${file})`, live: true});
        targets.push(...databaseTargets(given).filter((target) => target.path !== given && !targets.some((known) => known.path === target.path)));
    }
    let modelFilesKept = 0;
    if (modelsDir != null) {
        const registry = path.join(path.resolve(modelsDir), "registry.json");
        targets.push({path: registry, what: "registered-model records"});
        for (const entry of fs.existsSync(modelsDir) ? fs.readdirSync(modelsDir, {withFileTypes: true}) : []) {
            if (!entry.isFile() || entry.name === "registry.json")
                continue;
            if (removeModelFiles)
                targets.push({path: path.join(path.resolve(modelsDir), entry.name), what: "model file in the models folder"});
            else
                modelFilesKept++;
        }
    }
    return {targets, modelFilesKept};
}

/** Where a symbolic link leads in the end; the link itself when it leads nowhere (it is then removed as a link). */
function linkTarget(link: string): string {
    try {
        return fs.realpathSync(link);
    } catch {
        return link;
    }
}

/** A database file's own files and what a migration or re-key may have left beside it. */
function databaseTargets(file: string): WipeTarget[] {
    const {encrypting, rekeyed, replaced} = switchFiles(file);
    return [
        {path: file, what: "database (conversations, messages, audit, fingerprints, canary hashes, settings)", live: true},
        ...["-wal", "-shm", "-journal"].map((suffix) => ({path: file + suffix, what: `database ${suffix.slice(1)} file`, live: suffix !== "-journal"})),
        {path: envelopeFile(file), what: "database key file", live: true},
        {path: nextEnvelopeFile(file), what: "database key file of a re-key"},
        ...[encrypting, rekeyed].flatMap((leftover) => ["", "-journal", "-wal", "-shm"].map((suffix) => ({path: leftover + suffix, what: "copy left by a migration or re-key"}))),
        {path: replaced, what: "database file a migration or re-key replaced"},
        {path: unlockBackoffFile(file), what: "count of wrong passphrases (unlock back-off)"}
    ];
}

/** Zeroes and removes each file; a symbolic link is removed, never written through. A path remains while anything is there, a dangling link included. */
function removeTargets(targets: WipeTarget[]): WipeCheck[] {
    return targets.map(({path: target, what}) => {
        const stat = fs.lstatSync(target, {throwIfNoEntry: false});
        const existed = stat?.isFile() === true || stat?.isSymbolicLink() === true;
        if (stat?.isSymbolicLink() === true)
            fs.rmSync(target);
        else if (existed)
            zeroAndRemove(target);
        return {path: target, what, removed: existed, remains: fs.lstatSync(target, {throwIfNoEntry: false}) != null};
    });
}

export type OpenWipeOptions = {
    /** The open database (its own connection: no transaction may be open on it). */
    db: Database.Database,
    /** Its purger: the checkpoint that takes the deleted pages out of the WAL, or a purge kept pending while another reader holds a snapshot. */
    purger: DeletionPurger,
    /** The models folder whose `registry.json` goes (model files stay). */
    modelsDir?: string
};

/**
 * "Delete everything" on a database that stays open (the app's Settings): what `wipeStore` does
 * with the files, done inside the open database. Every row of every table goes in one
 * transaction (`secure_delete` zeroes them; the full-text index follows through its triggers),
 * `VACUUM` rewrites the file without the freed pages, and the purger's `wal_checkpoint(TRUNCATE)`
 * empties the WAL. The database file, its key file and its shared-memory index stay (the core
 * keeps running on them, under the same key); everything else `wipeStore` would remove around it
 * (the copies a migration or re-key left, the registered-model records) is removed the same way.
 * Model files are kept. The report has a check per table (rows left) and one per file.
 */
export function wipeOpenDatabase({db, purger, modelsDir}: OpenWipeOptions): WipeReport {
    if (db.name === ":memory:" || db.readonly)
        throw new Error("wipeOpenDatabase needs a writable database file");
    const ordinary = deleteEveryRow(db);
    db.exec("VACUUM");
    const purge = purger.afterDeletion();

    const file = path.resolve(db.name);
    const tableChecks: WipeCheck[] = ordinary.map((table) => {
        const {rows} = db.prepare(`SELECT count(*) AS rows FROM ${quoteName(table)}`).get() as {rows: number};
        return {path: `${file} (table ${table})`, what: `rows of ${table}`, removed: true, remains: rows > 0};
    });
    const walBytes = fs.statSync(file + "-wal", {throwIfNoEntry: false})?.size ?? 0;
    const walCheck: WipeCheck = {path: file + "-wal", what: "database wal file, emptied by a checkpoint", removed: true, remains: purge !== "done" || walBytes > 0};
    const {targets, modelFilesKept} = wipeTargets({database: file, modelsDir});
    const fileChecks = removeTargets(targets.filter((target) => target.live !== true));
    const checks = [...tableChecks, walCheck, ...fileChecks];
    return {checks, modelFilesKept, clean: checks.every((check) => !check.remains)};
}

/**
 * Deletes every row of every table in one transaction (the full-text index follows through its
 * triggers) and returns the tables emptied. Also empties an in-memory database (incognito conversations).
 */
export function deleteEveryRow(db: Database.Database): string[] {
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{name: string, sql: string | null}>;
    const virtualTables = tables.filter((table) => /^CREATE VIRTUAL TABLE/i.test(table.sql ?? "")).map((table) => table.name);
    // FTS5 keeps its own shadow tables (`<name>_data`, ...): emptied through the triggers of the table it indexes.
    const ordinary = tables.filter((table) => !virtualTables.includes(table.name) &&
        !virtualTables.some((virtual) => table.name.startsWith(virtual + "_"))).map((table) => table.name);
    db.transaction(() => {
        db.pragma("defer_foreign_keys = ON");
        for (const table of ordinary)
            db.prepare(`DELETE FROM ${quoteName(table)}`).run();
    })();
    return ordinary;
}

function quoteName(name: string) {
    return `"${name.replaceAll("\"", "\"\"")}"`;
}

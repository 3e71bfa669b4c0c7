import fs from "node:fs";
import Database from "better-sqlite3-multiple-ciphers";
import {DatabaseDamagedError} from "./DatabaseDamagedError.js";
import {deriveKey} from "./deriveKey.js";
import {createPrivateFile, fsyncFile, renameDurably, zeroAndRemove} from "./durableFiles.js";
import {
    envelopeFile, newDeviceEnvelope, newPassphraseEnvelope, nextEnvelopeFile, readEnvelope, writeEnvelope, type KeyEnvelope
} from "./keyEnvelope.js";
import {keyOpensLaterPages} from "./keyOpensLaterPages.js";
import {makeFilesPrivate} from "./makeFilesPrivate.js";
import {rememberSnapshotKey} from "./snapshotKeys.js";
import {PassphraseRequiredError} from "./PassphraseRequiredError.js";
import {StoreKeyUnavailableError} from "./StoreKeyUnavailableError.js";
import type {StoreKeySource} from "./types.js";
import {WrongPassphraseError} from "./WrongPassphraseError.js";

const sqliteMagic = Buffer.from("SQLite format 3\0", "latin1");

/** The files a switch of the database file leaves while it runs: each is settled by the next open (`settleInterruptedSwitch`). */
export const switchFiles = (database: string) => ({
    /** The encrypted copy a migration of a plain database writes. */
    encrypting: `${database}.encrypting`,
    /** The copy under a new key a re-key writes. */
    rekeyed: `${database}.rekey`,
    /** A second name of the replaced file, kept until its bytes are zeroed. */
    replaced: `${database}.replaced`
});

/**
 * Sets the cipher (SQLCipher 4 pages: AES-256, HMAC-SHA512 per page) and the 256-bit key on one
 * schema of a connection, as a raw key (`x'…'`): it is already a KDF's output or random, so
 * SQLCipher's own PBKDF2 (256,000 rounds, about 150 ms per open here) is skipped.
 */
export function applyCipherKey(db: Database.Database, key: Buffer, schema = "main"): void {
    db.pragma(`${schema}.cipher = 'sqlcipher'`);
    db.pragma(`${schema}.legacy = 4`);
    db.pragma(`${schema}.key = "x'${key.toString("hex")}'"`);
}

/** True when `file` starts with SQLite's plain header: written before encryption at rest. */
export function isPlainDatabase(file: string): boolean {
    const fd = fs.openSync(file, "r");
    try {
        const header = Buffer.alloc(sqliteMagic.length);
        const read = fs.readSync(fd, header, 0, header.length, 0);
        return read === header.length && header.equals(sqliteMagic);
    } finally {
        fs.closeSync(fd);
    }
}

/** A fresh envelope for a database created or migrated now with `source`. */
export function newEnvelopeFor(source: StoreKeySource): KeyEnvelope {
    if (source.passphrase != null)
        return newPassphraseEnvelope();
    if (source.keychainKey != null)
        return {version: 1, mode: "keychain"};
    return newDeviceEnvelope();
}

/** The key `envelope` names, from `source`; the named error when `source` lacks what it needs. */
export function keyFor(database: string, envelope: KeyEnvelope, source: StoreKeySource): Buffer {
    if (envelope.mode === "device")
        return Buffer.from(envelope.key, "hex");
    if (envelope.mode === "keychain") {
        if (source.keychainKey == null)
            throw new StoreKeyUnavailableError(database, "its key is held by the desktop app's OS keychain; set a passphrase in the app to open it from the CLI or web mode");
        return source.keychainKey;
    }
    if (source.passphrase == null)
        throw new PassphraseRequiredError(database);
    return deriveKey(source.passphrase, envelope.kdf);
}

/**
 * Whether opening `file` writable with `source` switches it, which needs it to this process alone:
 * creating it, encrypting a plain one, or settling a switch a crash interrupted
 * (`settleInterruptedSwitch`). A schema migration is the other switch an open may make (`openDatabase`).
 */
export function openSwitchesFile(file: string, source: StoreKeySource, readonly: boolean): boolean {
    if (readonly)
        return false;
    if ((fs.statSync(file, {throwIfNoEntry: false})?.size ?? 0) === 0)
        return true;
    if (source.unencrypted === true)
        return false;
    const {encrypting, rekeyed, replaced} = switchFiles(file);
    const leftovers = [...[encrypting, rekeyed].flatMap((copy) => ["", "-journal", "-wal", "-shm"].map((suffix) => copy + suffix)), replaced, nextEnvelopeFile(file)];
    return leftovers.some((leftover) => fs.existsSync(leftover)) || isPlainDatabase(file);
}

/**
 * A connection to `file`, keyed and verified, before any other statement runs. A new database is
 * created encrypted; a plain one (from before encryption at rest) is encrypted first, atomically
 * (`encryptPlainDatabase`). A key that does not open it throws `WrongPassphraseError` (or
 * `StoreKeyUnavailableError`) and writes nothing.
 */
export function openKeyedDatabase(file: string, source: StoreKeySource, readonly: boolean): {db: Database.Database, envelope: KeyEnvelope | null} {
    // Files an older version created readable by others are made private before anything is read from them.
    makeFilesPrivate([file, `${file}-wal`, `${file}-shm`, envelopeFile(file)]);
    if (source.unencrypted === true)
        return {db: new Database(file, {readonly}), envelope: null};
    if (!readonly)
        settleInterruptedSwitch(file);
    const size = fs.statSync(file, {throwIfNoEntry: false})?.size ?? 0;
    if (size === 0 && !readonly) {
        const envelope = newEnvelopeFor(source);
        const key = keyFor(file, envelope, source);
        writeEnvelope(envelopeFile(file), envelope);
        return {db: openWithKey(file, envelope, key, false), envelope};
    }
    if (size > 0 && isPlainDatabase(file)) {
        if (readonly)
            return {db: new Database(file, {readonly: true, fileMustExist: true}), envelope: null};
        encryptPlainDatabase(file, source);
    }

    const envelope = readEnvelope(envelopeFile(file));
    if (envelope == null)
        throw new StoreKeyUnavailableError(file, `it is encrypted and its key file ${envelopeFile(file)} is missing`);
    return {db: openWithKey(file, envelope, keyFor(file, envelope, source), readonly), envelope};
}

function openWithKey(file: string, envelope: KeyEnvelope, key: Buffer, readonly: boolean): Database.Database {
    const db = new Database(file, {readonly});
    try {
        applyCipherKey(db, key);
        db.prepare("SELECT count(*) FROM sqlite_master").get();
        rememberSnapshotKey(db, key);
        return db;
    } catch (error) {
        db.close();
        if ((error as {code?: unknown}).code !== "SQLITE_NOTADB")
            throw error;
        // The first page does not decrypt: a key that authenticates the pages after it is the right one, and the first page is damaged.
        if (keyOpensLaterPages(file, key))
            throw new DatabaseDamagedError(file, envelopeFile(file));
        throw envelope.mode === "passphrase"
            ? new WrongPassphraseError(file)
            : new StoreKeyUnavailableError(file, "its key does not open it: the key file belongs to another database " +
                "(or the database file's first 16 bytes, its salt, are damaged; the two look the same)");
    }
}

/**
 * Copies the whole database (tables with their rows, full-text indexes with their pages, indexes,
 * triggers, views, AUTOINCREMENT counters, schema version) into `target`, a new file, encrypted
 * under `key`, then flushes it. The source connection is keyed already (or plain).
 * (SQLite3MultipleCiphers has no `sqlcipher_export`; this is its equivalent.)
 */
export function exportDatabase(source: Database.Database, target: string, key: Buffer): void {
    for (const suffix of ["", "-journal", "-wal", "-shm"])
        fs.rmSync(target + suffix, {force: true});
    const version = source.pragma("user_version", {simple: true}) as number;
    type SchemaRow = {type: string, name: string, sql: string | null};
    const schema = source.prepare("SELECT type, name, sql FROM main.sqlite_master ORDER BY rowid").all() as SchemaRow[];
    const virtualTables = schema.filter((row) => row.type === "table" && /^CREATE VIRTUAL TABLE/i.test(row.sql ?? "")).map((row) => row.name);
    const isShadow = (name: string) => virtualTables.some((table) => name.startsWith(`${table}_`));
    const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

    // Created here, empty and private, since a connection opened "file must exist" cannot create what it attaches.
    createPrivateFile(target);
    source.prepare("ATTACH DATABASE ? AS target").run(target);
    // The rows of a full-text index's shadow tables are copied as they are, which SQLite's defensive mode (better-sqlite3's default) forbids.
    source.unsafeMode(true);
    try {
        applyCipherKey(source, key, "target");
        source.transaction(() => {
            const inTarget = (sql: string) => sql.replace(/^(CREATE\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|UNIQUE\s+INDEX|TRIGGER|VIEW)\s+)/i, "$1target.");
            const tables = schema.filter((row) => row.type === "table" && row.sql != null && !row.name.startsWith("sqlite_"));
            // Virtual tables first: creating one creates its shadow tables, which then get their rows like any table.
            for (const row of tables.filter((table) => virtualTables.includes(table.name)))
                source.exec(inTarget(row.sql!));
            for (const row of tables.filter((table) => !virtualTables.includes(table.name))) {
                if (!isShadow(row.name))
                    source.exec(inTarget(row.sql!));
                source.exec(`DELETE FROM target.${quote(row.name)}`);
                source.exec(`INSERT INTO target.${quote(row.name)} SELECT * FROM main.${quote(row.name)}`);
            }
            if (schema.some((row) => row.name === "sqlite_sequence")) {
                source.exec("DELETE FROM target.sqlite_sequence");
                source.exec("INSERT INTO target.sqlite_sequence SELECT * FROM main.sqlite_sequence");
            }
            for (const row of schema.filter((entry) => entry.type !== "table" && entry.sql != null))
                source.exec(inTarget(row.sql!));
        })();
        source.pragma(`target.user_version = ${version}`);
    } finally {
        source.unsafeMode(false);
        source.exec("DETACH DATABASE target");
    }
    fsyncFile(target);
}

/**
 * Encrypts a plain database in place, atomically: its WAL is checkpointed into it, it is exported
 * encrypted into a new file beside it, flushed, and renamed over it. A crash before the rename
 * leaves the plain database whole (the next open starts again); after it, the encrypted one. The
 * plain file's bytes are then overwritten with zeros.
 */
export function encryptPlainDatabase(file: string, source: StoreKeySource): void {
    const {encrypting} = switchFiles(file);
    const envelope = newEnvelopeFor(source);
    const key = keyFor(file, envelope, source);
    // Only an encrypted file uses the envelope: writing it first is harmless if the migration stops here.
    writeEnvelope(envelopeFile(file), envelope);
    const plain = new Database(file, {fileMustExist: true});
    try {
        plain.pragma("busy_timeout = 5000");
        plain.pragma("wal_checkpoint(TRUNCATE)");
        exportDatabase(plain, encrypting, key);
    } finally {
        plain.close();
    }
    switchFile(file, encrypting);
}

/** Puts `next` in place of `file` (rename, flushed); the replaced file's bytes are zeroed through a second name kept for it. */
export function switchFile(file: string, next: string): void {
    const {replaced} = switchFiles(file);
    fs.rmSync(replaced, {force: true});
    fs.linkSync(file, replaced);
    renameDurably(next, file);
    zeroAndRemove(replaced);
}

/**
 * Finishes or undoes a switch a crash interrupted. A migration's or re-key's copy not yet renamed
 * is removed (the database is still the old file, under the old key); a re-key renamed but whose
 * envelope was not yet switched gets its new envelope; a replaced file not yet zeroed is zeroed.
 */
export function settleInterruptedSwitch(file: string): void {
    const {encrypting, rekeyed, replaced} = switchFiles(file);
    const nextEnvelope = nextEnvelopeFile(file);
    const rekeyPending = fs.existsSync(rekeyed);
    if (rekeyPending || !fs.existsSync(nextEnvelope)) {
        for (const leftover of [encrypting, rekeyed])
            for (const suffix of ["", "-journal", "-wal", "-shm"])
                fs.rmSync(leftover + suffix, {force: true});
        fs.rmSync(nextEnvelope, {force: true});
    } else
        renameDurably(nextEnvelope, envelopeFile(file));

    const replacedStat = fs.statSync(replaced, {throwIfNoEntry: false});
    if (replacedStat != null) {
        const liveStat = fs.statSync(file, {throwIfNoEntry: false});
        // Still a second name of the live file (the crash came before the rename): only the name goes.
        if (liveStat != null && liveStat.ino === replacedStat.ino && liveStat.dev === replacedStat.dev)
            fs.rmSync(replaced, {force: true});
        else
            zeroAndRemove(replaced);
    }
}

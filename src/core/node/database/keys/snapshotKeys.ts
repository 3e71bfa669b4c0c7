import crypto from "node:crypto";
import type Database from "better-sqlite3-multiple-ciphers";

/** HKDF's `info` for the key of resume snapshots: a key of its own, never the store key itself. */
export const kvSnapshotKeyInfo = "cleanroom kv snapshot v1";

/** The snapshot key of each keyed connection, derived when it was opened; a plain or in-memory one has none. */
const snapshotKeys = new WeakMap<Database.Database, Buffer>();

/** Derives and keeps the snapshot key of a connection opened with `storeKey` (see `snapshotKeyOf`). */
export function rememberSnapshotKey(db: Database.Database, storeKey: Buffer): void {
    snapshotKeys.set(db, Buffer.from(crypto.hkdfSync("sha256", storeKey, Buffer.alloc(0), kvSnapshotKeyInfo, 32)));
}

/** The key resume snapshots of this database are sealed with; null for a connection with no store key (unencrypted, in memory). */
export function snapshotKeyOf(db: Database.Database): Buffer | null {
    return snapshotKeys.get(db) ?? null;
}

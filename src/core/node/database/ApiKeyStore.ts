import crypto from "node:crypto";
import type Database from "better-sqlite3-multiple-ciphers";
import {CleanroomError} from "../../common/errors.js";
import type {AuditLog} from "../audit/AuditLog.js";

/** A stored key as lists show it: never the key, never its hash. */
export type ApiKeyInfo = {id: string, label: string, createdAt: number};

/** What the server compares a presented key with: the key's id is its tenant, its label what the tenant is shown as. */
export type StoredApiKeyHash = {id: string, label: string, sha256: Buffer};

/** What a key starts with, so that one found in a file or a log is recognised as Cleanroom's. */
export const apiKeyPrefix = "crk-";
const keyBytes = 32;

/**
 * The local API server's keys (Settings → Local API server), in the encrypted store. A key is
 * 256 random bits, handed out once by `create` and never kept: only its SHA-256 is stored (a hash of
 * that much entropy cannot be reversed or guessed, so a slow hash would add nothing), and the server
 * compares a presented key's hash with each stored one in constant time (`ApiKeyRing`). The label
 * names the key's tenant in the server's log, the audit trail and the Isolation panel.
 */
export class ApiKeyStore {
    private readonly _db: Database.Database;
    private readonly _audit: AuditLog;

    public constructor(db: Database.Database, audit: AuditLog) {
        this._db = db;
        this._audit = audit;
    }

    /** A new key under `label` (unique among the keys): its plaintext is in the answer and nowhere else. */
    public create(label: string): {key: ApiKeyInfo, secret: string} {
        if (this._db.prepare("SELECT 1 FROM api_keys WHERE label = ?").get(label) != null)
            throw new CleanroomError("INVALID_INPUT", `A key labelled "${label}" exists already: choose another label, or revoke that key first.`, {param: "label"});
        const secret = apiKeyPrefix + crypto.randomBytes(keyBytes).toString("base64url");
        const key: ApiKeyInfo = {id: crypto.randomUUID(), label, createdAt: Date.now()};
        this._db.prepare("INSERT INTO api_keys (id, label, sha256, created_at) VALUES (?, ?, ?, ?)")
            .run(key.id, key.label, sha256Of(secret), key.createdAt);
        this._audit.record({kind: "api.keyCreated", data: {keyId: key.id, label}});
        return {key, secret};
    }

    /** Revokes a key at once: a running server refuses it from its next request. False when there is no such key. */
    public revoke(id: string): boolean {
        const row = this._db.prepare("SELECT label FROM api_keys WHERE id = ?").get(id) as {label: string} | undefined;
        if (row == null)
            return false;
        this._db.prepare("DELETE FROM api_keys WHERE id = ?").run(id);
        this._audit.record({kind: "api.keyRevoked", data: {keyId: id, label: row.label}});
        return true;
    }

    public list(): ApiKeyInfo[] {
        const rows = this._db.prepare("SELECT id, label, created_at FROM api_keys ORDER BY created_at, label").all() as Array<{id: string, label: string, created_at: number}>;
        return rows.map((row) => ({id: row.id, label: row.label, createdAt: row.created_at}));
    }

    /** The stored hashes, read anew at each call: a key revoked or created is seen by the next request. */
    public hashes(): StoredApiKeyHash[] {
        const rows = this._db.prepare("SELECT id, label, sha256 FROM api_keys").all() as Array<{id: string, label: string, sha256: Buffer}>;
        return rows.map((row) => ({id: row.id, label: row.label, sha256: row.sha256}));
    }
}

/** The SHA-256 a key is stored and compared as. */
export function sha256Of(key: string): Buffer {
    return crypto.createHash("sha256").update(key, "utf8").digest();
}

import crypto from "node:crypto";
import {sha256Of, type StoredApiKeyHash} from "../core/node/database/ApiKeyStore.js";

type KeyEntry = {tenant: string, sha256: Buffer};

/**
 * The API keys the server accepts, each a tenant. Keys are kept as SHA-256 hashes only and
 * a presented key is compared with every one of them in constant time (`timingSafeEqual` over
 * hashes of equal length), so neither a key's length nor its first different byte shows in the
 * time an answer takes.
 */
export class ApiKeyRing {
    private readonly _entries: () => KeyEntry[];

    /**
     * Keys given in the clear (`--api-key`; the first one's tenant is `key 1`), or the keys of the
     * encrypted store (`ApiKeyStore.hashes`, each tenant its label), read at each request: a key
     * revoked in the app is refused from the next request on.
     */
    public constructor(keys: string[] | {stored: () => StoredApiKeyHash[]}) {
        if (Array.isArray(keys)) {
            const entries = keys.map((key, index) => ({tenant: `key ${index + 1}`, sha256: sha256Of(key)}));
            this._entries = () => entries;
        } else
            this._entries = () => keys.stored().map(({label, sha256}) => ({tenant: label, sha256}));
    }

    public get size() {
        return this._entries().length;
    }

    /** The tenant of an `Authorization: Bearer <key>` header; null for a missing or wrong key. */
    public tenantOf(authorization: string | undefined): string | null {
        const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
        const presented = sha256Of(match?.[1] ?? "");
        let found: string | null = null;
        // Every key is compared, whichever matches: the time does not tell which one did.
        for (const entry of this._entries()) {
            if (crypto.timingSafeEqual(entry.sha256, presented) && match != null)
                found = entry.tenant;
        }
        return found;
    }
}

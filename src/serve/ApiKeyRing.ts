import crypto from "node:crypto";
import {sha256Of, type StoredApiKeyHash} from "../core/node/database/ApiKeyStore.js";
import type {ApiTenant} from "../core/node/turns/ApiRequestService.js";

type KeyEntry = {tenant: ApiTenant, sha256: Buffer};

/**
 * The API keys the server accepts, each a tenant. Keys are kept as SHA-256 hashes only and
 * a presented key is compared with every one of them in constant time (`timingSafeEqual` over
 * hashes of equal length), so neither a key's length nor its first different byte shows in the
 * time an answer takes.
 */
export class ApiKeyRing {
    private readonly _entries: () => KeyEntry[];

    /**
     * Keys given in the clear (`--api-key`; the first one's tenant is `key 1`, a key given twice one
     * tenant), or the keys of the encrypted store (`ApiKeyStore.hashes`, each tenant its key's id,
     * shown as its label), read at each request: a key revoked in the app is refused from the next
     * request on.
     */
    public constructor(keys: string[] | {stored: () => StoredApiKeyHash[]}) {
        if (Array.isArray(keys)) {
            const hashes = keys.map(sha256Of);
            // A key's tenant is named after its first place on the command line: never after its hash, which a short key could be guessed from.
            const entries = hashes.map((sha256) => {
                const name = `key ${hashes.findIndex((other) => other.equals(sha256)) + 1}`;
                return {tenant: {id: name, label: name}, sha256};
            });
            this._entries = () => entries;
        } else
            this._entries = () => keys.stored().map(({id, label, sha256}) => ({tenant: {id, label}, sha256}));
    }

    public get size() {
        return this._entries().length;
    }

    /** The tenant of an `Authorization: Bearer <key>` header; null for a missing or wrong key. */
    public tenantOf(authorization: string | undefined): ApiTenant | null {
        const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
        const presented = sha256Of(match?.[1] ?? "");
        let found: ApiTenant | null = null;
        // Every key is compared, whichever matches: the time does not tell which one did.
        for (const entry of this._entries()) {
            if (crypto.timingSafeEqual(entry.sha256, presented) && match != null)
                found = entry.tenant;
        }
        return found;
    }
}

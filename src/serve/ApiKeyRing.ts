import crypto from "node:crypto";

/**
 * The API keys `cleanroom serve` accepts, each a tenant. Keys are kept as SHA-256 hashes only and
 * a presented key is compared with every one of them in constant time (`timingSafeEqual` over
 * hashes of equal length), so neither a key's length nor its first different byte shows in the
 * time an answer takes.
 */
export class ApiKeyRing {
    private readonly _hashes: Buffer[];

    public constructor(keys: string[]) {
        this._hashes = keys.map(hashOf);
    }

    public get size() {
        return this._hashes.length;
    }

    /** The tenant's label (`key 1` for the first key given) for an `Authorization: Bearer <key>` header; null for a missing or wrong key. */
    public tenantOf(authorization: string | undefined): string | null {
        const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
        const presented = hashOf(match?.[1] ?? "");
        let found = -1;
        // Every key is compared, whichever matches: the time does not tell which one did.
        this._hashes.forEach((hash, index) => {
            if (crypto.timingSafeEqual(hash, presented) && match != null)
                found = index;
        });
        return found < 0 ? null : `key ${found + 1}`;
    }
}

function hashOf(key: string) {
    return crypto.createHash("sha256").update(key, "utf8").digest();
}

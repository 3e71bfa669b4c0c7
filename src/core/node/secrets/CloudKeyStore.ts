import {CloudKeyNeededError} from "../../common/errors.js";
import type {SecretVault} from "../../common/secrets.js";
import {secretNames} from "../settings/settingKeys.js";

/** The vault entry that holds the cloud key, with the origin it was given for. */
export const cloudApiKeySecret = secretNames.cloudApiKey;

/** What the vault holds: the key and the endpoint origin it was given for (null: stored before keys were bound). */
type StoredCloudKey = {key: string, origin: string | null};

/** Where the key stands for an endpoint. */
export type CloudKeyStatus = {
    /** A key is stored for this endpoint's origin. */
    usable: boolean,
    /** A key is stored, but for another origin (or none): it must be entered again. Else null. */
    reentry: CloudKeyNeededError | null
};

/**
 * The cloud API key, bound to the origin (scheme, host, port) of the endpoint it was given for.
 * It is handed out only for a request to that origin: pointing the app at another server never
 * sends it the key; the key must be entered again for the new one.
 */
export class CloudKeyStore {
    private readonly _vault: SecretVault;

    public constructor(vault: SecretVault) {
        this._vault = vault;
    }

    /** Keeps `key` for `endpoint`'s origin (replacing any key stored before). */
    public async store(key: string, endpoint: string): Promise<void> {
        await this._vault.write(cloudApiKeySecret, JSON.stringify({key, origin: originOf(endpoint)} satisfies StoredCloudKey));
    }

    public async forget(): Promise<void> {
        await this._vault.write(cloudApiKeySecret, null);
    }

    public async status(endpoint: string | null): Promise<CloudKeyStatus> {
        const stored = await this._read();
        if (stored == null)
            return {usable: false, reentry: null};
        const origin = endpoint != null ? originOf(endpoint) : null;
        if (origin != null && stored.origin === origin)
            return {usable: true, reentry: null};
        return {usable: false, reentry: new CloudKeyNeededError(origin, stored.origin)};
    }

    /**
     * The key for a request to `endpoint`: null when none is stored; `CloudKeyNeededError` when
     * the stored key was given for another origin (it is not handed out).
     */
    public async keyFor(endpoint: string): Promise<string | null> {
        const stored = await this._read();
        if (stored == null)
            return null;
        const origin = originOf(endpoint);
        if (origin == null || stored.origin !== origin)
            throw new CloudKeyNeededError(origin, stored.origin);
        return stored.key;
    }

    private async _read(): Promise<StoredCloudKey | null> {
        const raw = await this._vault.read(cloudApiKeySecret);
        if (raw == null)
            return null;
        try {
            const parsed = JSON.parse(raw) as Partial<StoredCloudKey> | null;
            if (typeof parsed?.key === "string" && typeof parsed.origin === "string")
                return {key: parsed.key, origin: parsed.origin};
        } catch {
            // A bare key, stored before keys were bound to an origin.
        }
        return {key: raw, origin: null};
    }
}

function originOf(endpoint: string): string | null {
    return URL.canParse(endpoint) ? new URL(endpoint).origin : null;
}

import type {SecretVault} from "../../common/secrets.js";
import {readOrCreateVaultKey} from "./readOrCreateVaultKey.js";
import {secretNames} from "../settings/settingKeys.js";

/** The vault entry that holds the fingerprint key (base64). */
export const fingerprintKeySecret = secretNames.fingerprintKey;
const keyBytes = 32;

/**
 * The install's key for fingerprints of conversations (HMAC-SHA-256): 32 random bytes, made on
 * first use and kept in the secret vault next to the cloud key (the OS keychain in the app; in
 * web mode and the CLI the memory vault, so a new key each launch, which is as good since
 * fingerprints are made afresh for every cloud turn and never stored).
 */
export class FingerprintKeyStore {
    private readonly _vault: SecretVault;
    private _key: Promise<Uint8Array> | null = null;

    public constructor(vault: SecretVault) {
        this._vault = vault;
    }

    public key(): Promise<Uint8Array> {
        this._key ??= this._readOrCreate().catch((error: unknown) => {
            this._key = null;
            throw error;
        });
        return this._key;
    }

    private async _readOrCreate(): Promise<Uint8Array> {
        return new Uint8Array(await readOrCreateVaultKey(this._vault, fingerprintKeySecret, keyBytes));
    }
}

import type {SecretVault} from "../../common/secrets.js";
import type {KeyWithoutPassphrase} from "../host/rekeyOpenDatabase.js";
import {secretNames} from "../settings/settingKeys.js";
import {readOrCreateVaultKey} from "./readOrCreateVaultKey.js";

/**
 * The desktop app's database key when no passphrase is set: 32 random bytes, made on first use
 * and kept wrapped by the OS keychain (Electron `safeStorage`, through main's KeyVault). Null when
 * the vault is not a real keychain (`basic_text` obfuscation, memory, unavailable): the database
 * then keeps its key in a key file beside it, as the CLI does. (Electron cannot run in this
 * project's CI: this path is typed and covered with a vault double, not with a real keychain.)
 */
export async function keychainStoreKey(vault: SecretVault): Promise<Buffer | null> {
    if (!vault.storage.startsWith("os-keychain"))
        return null;
    return await readOrCreateVaultKey(vault, secretNames.storeKey, 32);
}

/**
 * The app's key without a passphrase, for `openLockableCoreHost`: the keychain's (made anew when
 * none is kept, as after a passphrase is removed), or none where there is no real keychain (the
 * key file then). Once a passphrase replaces it, the keychain's copy is deleted: it opens nothing.
 */
export function keychainKeyWithoutPassphrase(vault: SecretVault): KeyWithoutPassphrase {
    return {
        key: async () => {
            const keychainKey = await keychainStoreKey(vault);
            return keychainKey != null ? {keychainKey} : {};
        },
        discard: () => vault.write(secretNames.storeKey, null)
    };
}

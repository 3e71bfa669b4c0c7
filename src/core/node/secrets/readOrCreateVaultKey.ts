import crypto from "node:crypto";
import type {SecretVault} from "../../common/secrets.js";

/** The random key of `bytes` bytes kept in the vault under `name` (base64), made and stored on first use. */
export async function readOrCreateVaultKey(vault: SecretVault, name: string, bytes: number): Promise<Buffer> {
    const stored = await vault.read(name);
    const decoded = stored != null ? Buffer.from(stored, "base64") : null;
    if (decoded != null && decoded.length === bytes)
        return decoded;
    const key = crypto.randomBytes(bytes);
    await vault.write(name, key.toString("base64"));
    return key;
}

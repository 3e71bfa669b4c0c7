import crypto from "node:crypto";
import type {KeyEnvelope} from "./keyEnvelope.js";

type ScryptKdf = Extract<KeyEnvelope, {mode: "passphrase"}>["kdf"];

/** Derived keys of this process, by salt, with a digest of the passphrase they came from: a second open costs no second scrypt. */
const derivedKeys = new Map<string, {passphraseDigest: string, key: Buffer}>();

/** The database key for `passphrase` (scrypt, memory-hard). The passphrase is never stored; the key stays in this process's memory until `forgetDerivedKeys`. */
export function deriveKey(passphrase: string, kdf: ScryptKdf): Buffer {
    const passphraseDigest = crypto.createHash("sha256").update(kdf.salt).update(passphrase, "utf8").digest("hex");
    const cached = derivedKeys.get(kdf.salt);
    if (cached != null && cached.passphraseDigest === passphraseDigest)
        return cached.key;

    const key = crypto.scryptSync(passphrase.normalize("NFC"), Buffer.from(kdf.salt, "hex"), 32, {
        N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r + (1 << 20)
    });
    derivedKeys.set(kdf.salt, {passphraseDigest, key});
    return key;
}

/** Zeroes and drops every derived key this process holds (the app locks). */
export function forgetDerivedKeys(): void {
    for (const {key} of derivedKeys.values())
        key.fill(0);
    derivedKeys.clear();
}

/** How many derived keys this process holds now (0 once locked). */
export function derivedKeyCount(): number {
    return derivedKeys.size;
}

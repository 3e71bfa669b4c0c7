import crypto from "node:crypto";
import {describe, expect, it} from "vitest";
import {HmacSha256} from "../../src/core/common/cloud/HmacSha256.js";
import {sha256} from "../../src/core/common/cloud/sha256.js";
import {FingerprintKeyStore, fingerprintKeySecret} from "../../src/core/node/secrets/FingerprintKeyStore.js";
import {MemorySecretVault} from "../../src/core/node/secrets/MemorySecretVault.js";

describe("HMAC-SHA-256 in the common layer", () => {
    const messages = ["", "a", "the quick brown fox jumps over the lazy dog", "x".repeat(55), "y".repeat(56), "z".repeat(64), "é".repeat(300)];
    const keys = [new Uint8Array(16).fill(1), crypto.randomBytes(32), crypto.randomBytes(64), crypto.randomBytes(100)];

    it("agrees with Node's crypto for keys of 16 to 100 bytes and messages across block boundaries", () => {
        for (const key of keys) {
            const mac = new HmacSha256(key);
            for (const message of messages) {
                const bytes = new TextEncoder().encode(message);
                const expected = crypto.createHmac("sha256", key).update(bytes).digest();
                expect(Buffer.from(mac.digest(bytes)).equals(expected)).toBe(true);
                expect(mac.mac53(bytes)).toBe((expected.readUInt32BE(0) >>> 11) * 2 ** 32 + expected.readUInt32BE(4));
                expect(Number.isSafeInteger(mac.mac53(bytes))).toBe(true);
            }
        }
    });

    it("SHA-256 still agrees with Node's crypto", () => {
        for (const message of messages)
            expect(Buffer.from(sha256(message)).toString("hex")).toBe(crypto.createHash("sha256").update(message).digest("hex"));
    });

    it("refuses a key shorter than 16 bytes", () => {
        expect(() => new HmacSha256(new Uint8Array(15))).toThrow(RangeError);
    });
});

describe("the install's fingerprint key", () => {
    it("is made once, 32 random bytes, kept in the secret vault, and differs between installs", async () => {
        const vault = new MemorySecretVault();
        const first = await new FingerprintKeyStore(vault).key();
        expect(first.length).toBe(32);
        expect(Buffer.from((await vault.read(fingerprintKeySecret))!, "base64").equals(Buffer.from(first))).toBe(true);
        expect(Buffer.from(await new FingerprintKeyStore(vault).key()).equals(Buffer.from(first))).toBe(true);
        const other = await new FingerprintKeyStore(new MemorySecretVault()).key();
        expect(Buffer.from(other).equals(Buffer.from(first))).toBe(false);
    });
});

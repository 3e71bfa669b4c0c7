import crypto from "node:crypto";
import type {ConversationId} from "../../common/types.js";

/**
 * What a snapshot is bound to besides its conversation: what must be the same for its KV cells to
 * mean the same thing. Any difference refuses it.
 */
export type KvSnapshotBinding = {
    /** The model file's fingerprint (`modelFingerprint`: SHA-256 of its first MiB and its size), with its size and modification time. */
    model: string,
    /** Context settings that shape the KV cache: cells, bytes of state (its types), batch size, SWA cache, GPU layers. */
    context: string,
    /** The llama.cpp binary and its backend (`describeLlamaBuild`, GPU layers). */
    build: string
};

/** What a stored snapshot says it covers, all of it authenticated as associated data. */
export type KvSnapshotHeader = KvSnapshotBinding & {tokenCount: number};

const formatVersion = 1;

/** The associated data: one canonical text of the conversation id and the header, in a fixed order. */
export function associatedData(conversationId: ConversationId, header: KvSnapshotHeader): Buffer {
    return Buffer.from(JSON.stringify([formatVersion, conversationId, header.model, header.context, header.build, header.tokenCount]), "utf8");
}

/** A short public id of the key (an HMAC of a constant): a snapshot sealed under another store key is told apart from a tampered one. */
export function keyIdOf(key: Buffer): string {
    return crypto.createHmac("sha256", key).update("cleanroom kv snapshot key id").digest("hex").slice(0, 16);
}

/** AES-256-GCM of `plain` with a fresh 96-bit nonce; the tag is appended to the ciphertext. */
export function sealKvSnapshot(key: Buffer, data: Buffer, plain: Buffer): {nonce: Buffer, sealed: Buffer} {
    const sealer = startSealing(key, data);
    sealer.update(plain);
    return sealer.finish();
}

/** `sealKvSnapshot` a piece at a time: `update` with each piece of the plain text in order, then `finish`. */
export function startSealing(key: Buffer, data: Buffer) {
    const nonce = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(data);
    const pieces: Buffer[] = [];
    return {
        update: (plain: Buffer) => void pieces.push(cipher.update(plain)),
        finish: (): {nonce: Buffer, sealed: Buffer} => ({nonce, sealed: Buffer.concat([...pieces, cipher.final(), cipher.getAuthTag()])})
    };
}

/** The plain state, or null when the ciphertext, its nonce or the associated data is not what was sealed. */
export function openKvSnapshot(key: Buffer, data: Buffer, nonce: Buffer, sealed: Buffer): Buffer | null {
    if (nonce.length !== 12 || sealed.length < 16)
        return null;
    try {
        const decipher = crypto.createDecipheriv("aes-256-gcm", key, nonce);
        decipher.setAAD(data);
        decipher.setAuthTag(sealed.subarray(sealed.length - 16));
        const plain = decipher.update(sealed.subarray(0, sealed.length - 16));
        try {
            decipher.final();
        } catch {
            plain.fill(0);
            return null;
        }
        return plain;
    } catch {
        return null;
    }
}

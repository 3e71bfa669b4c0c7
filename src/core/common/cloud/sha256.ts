/**
 * A small synchronous SHA-256 (FIPS 180-4) in plain TypeScript. The common layer runs in
 * browsers too, where `crypto.subtle.digest` exists but is asynchronous; the canary scanner
 * must validate checksums synchronously while a reply streams.
 */
const roundConstants = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
]);

const initialHash = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

const textEncoder = new TextEncoder();

/** SHA-256 of the bytes, or of the UTF-8 encoding of the string. Returns the 32-byte digest. */
export function sha256(input: string | Uint8Array): Uint8Array {
    return sha256Continue(Uint32Array.from(initialHash), typeof input === "string" ? textEncoder.encode(input) : input, 0);
}

/**
 * @internal The state after hashing one 64-byte block from the initial state (HMAC precomputes
 * its padded keys this way).
 */
export function sha256StateAfterBlock(block: Uint8Array): Uint32Array {
    const state = Uint32Array.from(initialHash);
    compressBlocks(state, new DataView(block.buffer, block.byteOffset, 64), 64, new Uint32Array(64));
    return state;
}

/**
 * @internal Finishes a SHA-256 whose first `priorBytes` bytes (a multiple of 64) are already in
 * `state`, with `message` as the rest. `state` is not changed.
 */
export function sha256Continue(state: Uint32Array, message: Uint8Array, priorBytes: number): Uint8Array {
    const bitLength = (priorBytes + message.length) * 8;
    const paddedLength = (((message.length + 9) + 63) >> 6) << 6;
    const padded = new Uint8Array(paddedLength);
    padded.set(message);
    padded[message.length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(paddedLength - 8, Math.floor(bitLength / 0x1_0000_0000));
    view.setUint32(paddedLength - 4, bitLength >>> 0);

    const hash = state.slice();
    compressBlocks(hash, view, paddedLength, new Uint32Array(64));
    const digest = new Uint8Array(32);
    const digestView = new DataView(digest.buffer);
    for (let i = 0; i < 8; i++)
        digestView.setUint32(i * 4, hash[i]!);
    return digest;
}

function compressBlocks(hash: Uint32Array, view: DataView, length: number, words: Uint32Array) {
    for (let block = 0; block < length; block += 64)
        sha256Compress(hash, view, block, words);
}

/** @internal One 64-byte block at `offset` of `view` into `hash`; `words` is scratch space of 64 words. */
export function sha256Compress(hash: Uint32Array, view: DataView, block: number, words: Uint32Array) {
    for (let i = 0; i < 16; i++)
        words[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i++) {
        const w15 = words[i - 15]!;
        const w2 = words[i - 2]!;
        const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
        const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
        words[i] = (words[i - 16]! + s0 + words[i - 7]! + s1) >>> 0;
    }

    let a = hash[0]!, b = hash[1]!, c = hash[2]!, d = hash[3]!, e = hash[4]!, f = hash[5]!, g = hash[6]!, h = hash[7]!;
    for (let i = 0; i < 64; i++) {
        const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const choice = (e & f) ^ (~e & g);
        const t1 = (h + s1 + choice + roundConstants[i]! + words[i]!) >>> 0;
        const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const majority = (a & b) ^ (a & c) ^ (b & c);
        const t2 = (s0 + majority) >>> 0;
        h = g;
        g = f;
        f = e;
        e = (d + t1) >>> 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) >>> 0;
    }
    hash[0] = (hash[0]! + a) >>> 0;
    hash[1] = (hash[1]! + b) >>> 0;
    hash[2] = (hash[2]! + c) >>> 0;
    hash[3] = (hash[3]! + d) >>> 0;
    hash[4] = (hash[4]! + e) >>> 0;
    hash[5] = (hash[5]! + f) >>> 0;
    hash[6] = (hash[6]! + g) >>> 0;
    hash[7] = (hash[7]! + h) >>> 0;
}

/** SHA-256 as 64 lower-case hex digits. */
export function sha256Hex(input: string | Uint8Array): string {
    let hex = "";
    for (const byte of sha256(input))
        hex += byte.toString(16).padStart(2, "0");
    return hex;
}

function rotr(value: number, bits: number) {
    return (value >>> bits) | (value << (32 - bits));
}

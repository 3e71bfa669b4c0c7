import {sha256, sha256Compress, sha256Continue, sha256StateAfterBlock} from "./sha256.js";

const blockBytes = 64;
const digestBytes = 32;
const twoPow32 = 2 ** 32;
/** Shortest key accepted: 128 bits. */
export const minHmacKeyBytes = 16;

/**
 * HMAC-SHA-256 (RFC 2104) with one key, synchronous and free of Node (the common layer runs in
 * browsers too). The padded keys are hashed once, so each message costs two SHA-256 finishes;
 * `mac53` reuses its buffers, for the many short messages of fingerprinting.
 */
export class HmacSha256 {
    private readonly _inner: Uint32Array;
    private readonly _outer: Uint32Array;
    private _buffer = new Uint8Array(2 * blockBytes);
    private _view = new DataView(this._buffer.buffer);
    private readonly _state = new Uint32Array(8);
    private readonly _words = new Uint32Array(64);
    private readonly _outerBlock = new Uint8Array(blockBytes);
    private readonly _outerView = new DataView(this._outerBlock.buffer);

    public constructor(key: Uint8Array) {
        if (key.length < minHmacKeyBytes)
            throw new RangeError(`An HMAC key needs at least ${minHmacKeyBytes} bytes, got ${key.length}.`);
        const block = new Uint8Array(blockBytes);
        block.set(key.length > blockBytes ? sha256(key) : key);
        const innerPad = block.map((byte) => byte ^ 0x36);
        const outerPad = block.map((byte) => byte ^ 0x5c);
        this._inner = sha256StateAfterBlock(innerPad);
        this._outer = sha256StateAfterBlock(outerPad);
        block.fill(0);
        innerPad.fill(0);
        outerPad.fill(0);
        // The outer message is always the 32-byte inner digest: its padding never changes.
        this._outerBlock[digestBytes] = 0x80;
        this._outerView.setUint32(blockBytes - 4, (blockBytes + digestBytes) * 8);
    }

    /** The 32-byte MAC of the message. */
    public digest(message: Uint8Array): Uint8Array {
        return sha256Continue(this._outer, sha256Continue(this._inner, message, blockBytes), blockBytes);
    }

    /** The first 53 bits of the MAC of `message[0, length)`, as a safe integer: `digest()` without allocating. */
    public mac53(message: Uint8Array, length = message.length): number {
        const padded = (((length + 9) + 63) >> 6) << 6;
        if (padded > this._buffer.length) {
            this._buffer = new Uint8Array(padded);
            this._view = new DataView(this._buffer.buffer);
        }
        const buffer = this._buffer;
        buffer.set(message.subarray(0, length));
        buffer.fill(0, length, padded);
        buffer[length] = 0x80;
        const bits = (blockBytes + length) * 8;
        this._view.setUint32(padded - 8, Math.floor(bits / twoPow32));
        this._view.setUint32(padded - 4, bits >>> 0);

        const state = this._state;
        state.set(this._inner);
        for (let block = 0; block < padded; block += blockBytes)
            sha256Compress(state, this._view, block, this._words);
        for (let i = 0; i < 8; i++)
            this._outerView.setUint32(i * 4, state[i]!);
        state.set(this._outer);
        sha256Compress(state, this._outerView, 0, this._words);
        return (state[0]! >>> 11) * twoPow32 + state[1]!;
    }
}

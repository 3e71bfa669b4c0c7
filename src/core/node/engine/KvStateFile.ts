import fs from "node:fs/promises";

/**
 * Reader and writer for llama.cpp's sequence state files (`llama_state_seq_save_file`):
 * 'ggsq' magic, version, token count and tokens, then the KV cache's own serialisation
 * (stream count; per stream: cell count, per-cell position and sequence ids, `v_trans`,
 * layer count, per layer K type, row size and rows, then V likewise).
 *
 * The layer layout is never assumed: `readKvLayout` learns it from a file that the engine
 * itself wrote, and everything else is checked against what was learned.
 */

const stateMagic = 0x67677371; // 'ggsq'
const chunkBytes = 1 << 20;

export type KvLayerLayout = {
    kType: number,
    kRowBytes: number,
    vType: number,
    /** Bytes per cell of V in this layer (row size, or element size x embedding width when transposed). */
    vCellBytes: number,
    /** Only when V is stored transposed. */
    vElementBytes?: number,
    vEmbd?: number
};

export type KvLayout = {
    version: number,
    vTransposed: boolean,
    layers: KvLayerLayout[],
    /** K plus V bytes per KV cell, over all layers. */
    bytesPerCell: number
};

export type KvStateSummary = {
    version: number,
    tokenCount: number,
    streams: number,
    cellCount: number,
    layout: KvLayout | null,
    payloadBytes: number,
    nonZeroPayloadBytes: number,
    /** Non-zero K plus V payload bytes of each layer, in layer order. */
    nonZeroBytesPerLayer: number[],
    positions: {first: number | null, last: number | null, ascending: boolean}
};

export class KvStateFormatError extends Error {
    public constructor(message: string) {
        super(`Unexpected KV state file: ${message}`);
        this.name = "KvStateFormatError";
    }
}

/** Streams through a file in chunks; every read is bounds-checked. */
class ChunkedReader {
    private readonly _file: fs.FileHandle;
    private readonly _size: number;
    private _buffer = Buffer.alloc(0);
    private _bufferStart = 0;
    private _offset = 0;

    private constructor(file: fs.FileHandle, size: number) {
        this._file = file;
        this._size = size;
    }

    public static async open(path: string) {
        const file = await fs.open(path, "r");
        const {size} = await file.stat();
        return new ChunkedReader(file, size);
    }

    public get offset() {
        return this._offset;
    }

    public get remaining() {
        return this._size - this._offset;
    }

    public async close() {
        await this._file.close();
    }

    public async u32() {
        return (await this._take(4)).readUInt32LE(0);
    }

    public async i32() {
        return (await this._take(4)).readInt32LE(0);
    }

    public async u64() {
        const value = (await this._take(8)).readBigUInt64LE(0);
        if (value > BigInt(Number.MAX_SAFE_INTEGER))
            throw new KvStateFormatError(`a 64-bit size ${value} is out of range`);

        return Number(value);
    }

    public async skip(bytes: number) {
        this._ensureAvailable(bytes);
        this._offset += bytes;
    }

    /** Reads `bytes` bytes and counts those that are not zero. */
    public async countNonZero(bytes: number) {
        this._ensureAvailable(bytes);
        let nonZero = 0;
        let left = bytes;
        const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1, bytes)));
        while (left > 0) {
            const length = Math.min(buffer.length, left);
            const {bytesRead} = await this._file.read(buffer, 0, length, this._offset);
            if (bytesRead !== length)
                throw new KvStateFormatError(`short read at byte ${this._offset}`);

            nonZero += countNonZeroBytes(buffer, length);
            this._offset += length;
            left -= length;
        }
        return nonZero;
    }

    private _ensureAvailable(bytes: number) {
        if (!Number.isSafeInteger(bytes) || bytes < 0 || this._offset + bytes > this._size)
            throw new KvStateFormatError(`needs ${bytes} more bytes at byte ${this._offset}, the file has ${this._size}`);
    }

    private async _take(bytes: number) {
        this._ensureAvailable(bytes);
        const end = this._offset + bytes;
        if (this._offset < this._bufferStart || end > this._bufferStart + this._buffer.length) {
            const length = Math.min(chunkBytes, this._size - this._offset);
            const buffer = Buffer.allocUnsafe(length);
            const {bytesRead} = await this._file.read(buffer, 0, length, this._offset);
            this._buffer = buffer.subarray(0, bytesRead);
            this._bufferStart = this._offset;
        }
        const start = this._offset - this._bufferStart;
        this._offset = end;
        return this._buffer.subarray(start, start + bytes);
    }
}

/** Compared against in one native call: a scrubbed cache reads back as nothing but zeros. */
const zeroChunk = Buffer.alloc(chunkBytes);

function countNonZeroBytes(buffer: Buffer, length: number) {
    if (length <= zeroChunk.length && buffer.subarray(0, length).equals(zeroChunk.subarray(0, length)))
        return 0;
    let nonZero = 0;
    // Whole 8-byte words, then each byte of a word that is not zero.
    const words = Math.floor(length / 8);
    for (let i = 0; i < words; i++) {
        if (buffer.readBigUInt64LE(i * 8) !== 0n) {
            for (let j = i * 8; j < i * 8 + 8; j++)
                if (buffer[j] !== 0)
                    nonZero++;
        }
    }
    for (let i = words * 8; i < length; i++)
        if (buffer[i] !== 0)
            nonZero++;

    return nonZero;
}

/** Parses a whole state file, counting non-zero K/V payload bytes. */
export async function readKvState(path: string): Promise<KvStateSummary> {
    const reader = await ChunkedReader.open(path);
    try {
        const magic = await reader.u32();
        if (magic !== stateMagic)
            throw new KvStateFormatError(`magic 0x${magic.toString(16)} is not 'ggsq'`);

        const version = await reader.u32();
        const tokenCount = await reader.u32();
        await reader.skip(tokenCount * 4);

        const streams = await reader.u32();
        if (streams > 1)
            throw new KvStateFormatError(`${streams} streams in a single-sequence state`);

        const summary: KvStateSummary = {
            version, tokenCount, streams, cellCount: 0, layout: null, payloadBytes: 0, nonZeroPayloadBytes: 0, nonZeroBytesPerLayer: [],
            positions: {first: null, last: null, ascending: true}
        };
        if (streams === 0)
            return summary;

        const cellCount = await reader.u32();
        summary.cellCount = cellCount;
        let previous: number | null = null;
        for (let cell = 0; cell < cellCount; cell++) {
            const position = await reader.i32();
            const sequenceIds = await reader.u32();
            if (sequenceIds > 64)
                throw new KvStateFormatError(`cell ${cell} claims ${sequenceIds} sequence ids`);

            await reader.skip(sequenceIds * 4);
            if (summary.positions.first == null)
                summary.positions.first = position;
            if (previous != null && position <= previous)
                summary.positions.ascending = false;
            previous = position;
        }
        summary.positions.last = previous;
        if (cellCount === 0)
            return summary;

        const vTransposed = (await reader.u32()) !== 0;
        const layerCount = await reader.u32();
        if (layerCount === 0 || layerCount > 4096)
            throw new KvStateFormatError(`${layerCount} layers`);

        const layers: KvLayerLayout[] = [];
        for (let layer = 0; layer < layerCount; layer++) {
            const kType = await reader.i32();
            const kRowBytes = await reader.u64();
            const nonZeroK = await reader.countNonZero(kRowBytes * cellCount);
            summary.nonZeroPayloadBytes += nonZeroK;
            summary.nonZeroBytesPerLayer.push(nonZeroK);
            summary.payloadBytes += kRowBytes * cellCount;
            layers.push({kType, kRowBytes, vType: -1, vCellBytes: 0});
        }
        for (const [index, layer] of layers.entries()) {
            layer.vType = await reader.i32();
            if (!vTransposed) {
                layer.vCellBytes = await reader.u64();
            } else {
                layer.vElementBytes = await reader.u32();
                layer.vEmbd = await reader.u32();
                layer.vCellBytes = layer.vElementBytes * layer.vEmbd;
            }
            const nonZeroV = await reader.countNonZero(layer.vCellBytes * cellCount);
            summary.nonZeroPayloadBytes += nonZeroV;
            summary.nonZeroBytesPerLayer[index]! += nonZeroV;
            summary.payloadBytes += layer.vCellBytes * cellCount;
        }

        if (reader.remaining !== 0)
            throw new KvStateFormatError(`${reader.remaining} bytes after the last layer`);

        summary.layout = {
            version,
            vTransposed,
            layers,
            bytesPerCell: layers.reduce((sum, layer) => sum + layer.kRowBytes + layer.vCellBytes, 0)
        };
        return summary;
    } finally {
        await reader.close();
    }
}

/** Learns the layer layout from a state file the engine saved (it must hold at least one cell). */
export async function readKvLayout(path: string): Promise<KvLayout> {
    const summary = await readKvState(path);
    if (summary.layout == null)
        throw new KvStateFormatError("the reference state holds no KV cell to learn the layout from");

    return summary.layout;
}

/**
 * Writes a state whose `cellCount` cells (positions 0..cellCount-1, sequence 0) carry all-zero
 * K and V payloads in the learned layout. Loading it into a cleared sequence overwrites every
 * cell it occupies with zeros. The token list names `fillToken` once per cell so that
 * node-llama-cpp knows the cells are in use and its `clearHistory()` frees them all.
 * Returns the number of payload bytes written.
 */
export type ZeroStateOptions = {
    /** Token id listed once per cell. Defaults to `0`. */
    fillToken?: number,
    /** List no tokens at all (the capacity probe: llama.cpp then judges the KV cell count alone). Defaults to `false`. */
    omitTokens?: boolean,
    /**
     * Leave the K/V payload as a hole in the file (it reads as zeros, and costs no writing): for the
     * capacity probe, which llama.cpp refuses on its cell count, before it reads any payload.
     * Defaults to `false`.
     */
    sparsePayload?: boolean
};

export async function writeZeroKvState(path: string, layout: KvLayout, cellCount: number, {fillToken = 0, omitTokens = false, sparsePayload = false}: ZeroStateOptions = {}): Promise<number> {
    const file = await fs.open(path, "wx", 0o600);
    try {
        let position = 0;
        const write = async (buffer: Buffer) => {
            await file.write(buffer, 0, buffer.length, position);
            position += buffer.length;
        };
        const zeros = Buffer.alloc(chunkBytes);
        const writeZeros = async (bytes: number) => {
            if (sparsePayload) {
                position += bytes;
                return;
            }
            let left = bytes;
            while (left > 0) {
                const length = Math.min(left, zeros.length);
                await file.write(zeros, 0, length, position);
                position += length;
                left -= length;
            }
        };

        const header = Buffer.alloc(3 * 4);
        header.writeUInt32LE(stateMagic, 0);
        header.writeUInt32LE(layout.version, 4);
        const tokenCount = omitTokens ? 0 : cellCount;
        header.writeUInt32LE(tokenCount, 8);
        await write(header);

        const tokens = Buffer.alloc(tokenCount * 4);
        for (let index = 0; index < tokenCount; index++)
            tokens.writeInt32LE(fillToken, index * 4);
        await write(tokens);

        const streamHeader = Buffer.alloc(2 * 4);
        streamHeader.writeUInt32LE(1, 0); // one stream
        streamHeader.writeUInt32LE(cellCount, 4);
        await write(streamHeader);

        const cells = Buffer.alloc(cellCount * 12);
        for (let cell = 0; cell < cellCount; cell++) {
            cells.writeInt32LE(cell, cell * 12);
            cells.writeUInt32LE(1, cell * 12 + 4);
            cells.writeInt32LE(0, cell * 12 + 8);
        }
        await write(cells);

        const layerHeader = Buffer.alloc(8);
        layerHeader.writeUInt32LE(layout.vTransposed ? 1 : 0, 0);
        layerHeader.writeUInt32LE(layout.layers.length, 4);
        await write(layerHeader);

        let payload = 0;
        for (const layer of layout.layers) {
            const kHeader = Buffer.alloc(12);
            kHeader.writeInt32LE(layer.kType, 0);
            kHeader.writeBigUInt64LE(BigInt(layer.kRowBytes), 4);
            await write(kHeader);
            await writeZeros(layer.kRowBytes * cellCount);
            payload += layer.kRowBytes * cellCount;
        }
        for (const layer of layout.layers) {
            if (!layout.vTransposed) {
                const vHeader = Buffer.alloc(12);
                vHeader.writeInt32LE(layer.vType, 0);
                vHeader.writeBigUInt64LE(BigInt(layer.vCellBytes), 4);
                await write(vHeader);
            } else {
                const vHeader = Buffer.alloc(12);
                vHeader.writeInt32LE(layer.vType, 0);
                vHeader.writeUInt32LE(layer.vElementBytes ?? 0, 4);
                vHeader.writeUInt32LE(layer.vEmbd ?? 0, 8);
                await write(vHeader);
            }
            await writeZeros(layer.vCellBytes * cellCount);
            payload += layer.vCellBytes * cellCount;
        }
        await file.truncate(position); // a sparse payload ends in a hole
        return payload;
    } finally {
        await file.close();
    }
}

import {KvStateFormatError, type ChunkedReader, type ChunkedWriter} from "./StateFileIo.js";
import {readSequenceState, writeZeroSequenceState, type ZeroStateOptions} from "./SequenceStateFile.js";

export {KvStateFormatError};
export type {ZeroStateOptions};

/**
 * Reader and writer for one KV cache's part of llama.cpp's sequence state files
 * (`llama_state_seq_save_file`, `llama_kv_cache::state_write`): stream count; per stream: cell
 * count, per-cell position and sequence ids, `v_trans`, layer count, per layer K type, row size and
 * rows, then V likewise. A state may hold several such parts and a recurrent state (see
 * `SequenceStateFile.ts`); `readKvState` and `writeZeroKvState` handle a state of one KV cache.
 *
 * The layer layout is never assumed: it is learned from a file that the engine itself wrote, and
 * everything else is checked against what was learned.
 */

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

/** The layout of one KV cache in a state file. */
export type KvLayout = {
    version: number,
    vTransposed: boolean,
    layers: KvLayerLayout[],
    /** K plus V bytes per KV cell, over all layers. */
    bytesPerCell: number
};

export type KvSectionSummary = {
    streams: number,
    cellCount: number,
    layout: KvLayout | null,
    payloadBytes: number,
    nonZeroPayloadBytes: number,
    /** Non-zero K plus V payload bytes of each layer, in layer order. */
    nonZeroBytesPerLayer: number[],
    positions: {first: number | null, last: number | null, ascending: boolean}
};

export type KvStateSummary = KvSectionSummary & {version: number, tokenCount: number};

/** Reads one KV cache's part of a state, counting non-zero K/V payload bytes. */
export async function readKvSection(reader: ChunkedReader, version: number): Promise<KvSectionSummary> {
    const streams = await reader.u32();
    if (streams > 1)
        throw new KvStateFormatError(`${streams} streams in a single-sequence state`);

    const summary: KvSectionSummary = {
        streams, cellCount: 0, layout: null, payloadBytes: 0, nonZeroPayloadBytes: 0, nonZeroBytesPerLayer: [],
        positions: {first: null, last: null, ascending: true}
    };
    if (streams === 0)
        return summary;

    const cellCount = await reader.u32();
    summary.cellCount = cellCount;
    let previous: number | null = null;
    for (let cell = 0; cell < cellCount; cell++) {
        const header = reader.takeBuffered(8) ?? await reader.take(8);
        const position = header.readInt32LE(0);
        const sequenceIds = header.readUInt32LE(4);
        if (sequenceIds > 64)
            throw new KvStateFormatError(`cell ${cell} claims ${sequenceIds} sequence ids`);

        if (reader.takeBuffered(sequenceIds * 4) == null)
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

    summary.layout = {
        version,
        vTransposed,
        layers,
        bytesPerCell: layers.reduce((sum, layer) => sum + layer.kRowBytes + layer.vCellBytes, 0)
    };
    return summary;
}

/**
 * Writes one KV cache's part of a zero state: `cellCount` cells of sequence 0 at `position(cell)`,
 * all-zero K and V payloads in `layout`. Returns the payload bytes.
 */
export async function writeZeroKvSection(writer: ChunkedWriter, layout: KvLayout, cellCount: number, position: (cell: number) => number): Promise<number> {
    await writer.u32(1, cellCount); // one stream
    // Per cell: position, one sequence id, sequence 0. In the host's byte order, as llama.cpp writes and reads
    // its state (the readers here take little-endian: the hosts llama.cpp runs on); a typed array, not
    // thousands of `writeInt32LE` calls.
    const cells = new Int32Array(cellCount * 3);
    for (let cell = 0; cell < cellCount; cell++) {
        cells[cell * 3] = position(cell);
        cells[cell * 3 + 1] = 1;
    }
    await writer.bytes(Buffer.from(cells.buffer, cells.byteOffset, cells.byteLength));
    await writer.u32(layout.vTransposed ? 1 : 0, layout.layers.length);

    let payload = 0;
    for (const layer of layout.layers) {
        await writer.i32(layer.kType);
        await writer.u64(layer.kRowBytes);
        await writer.zeros(layer.kRowBytes * cellCount);
        payload += layer.kRowBytes * cellCount;
    }
    for (const layer of layout.layers) {
        await writer.i32(layer.vType);
        if (!layout.vTransposed)
            await writer.u64(layer.vCellBytes);
        else
            await writer.u32(layer.vElementBytes ?? 0, layer.vEmbd ?? 0);
        await writer.zeros(layer.vCellBytes * cellCount);
        payload += layer.vCellBytes * cellCount;
    }
    return payload;
}

/** Parses a whole state file of one KV cache, counting non-zero K/V payload bytes. */
export async function readKvState(path: string): Promise<KvStateSummary> {
    const state = await readSequenceState(path, ["kv"]);
    const [section] = state.sections;
    if (section == null || section.kind === "recurrent")
        throw new KvStateFormatError("no KV cache in the state");
    return {...section.kv, version: state.version, tokenCount: state.tokenCount};
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
 * K and V payloads in the learned layout (see `writeZeroSequenceState`). Returns the number of
 * payload bytes written.
 */
export async function writeZeroKvState(path: string, layout: KvLayout, cellCount: number, options: ZeroStateOptions = {}): Promise<number> {
    return await writeZeroSequenceState(path, {version: layout.version, sections: [{kind: "kv", kv: layout}]}, cellCount, options);
}

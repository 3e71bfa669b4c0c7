import {ChunkedReader, ChunkedWriter, KvStateFormatError} from "./StateFileIo.js";
import {readKvSection, writeZeroKvSection, type KvLayout, type KvSectionSummary} from "./KvStateFile.js";

/**
 * A whole sequence state file (`llama_state_seq_save_file`): 'ggsq' magic, version, token count
 * and tokens, then each part of the model's memory in turn, as llama.cpp writes them:
 * - `kv`: a KV cache (`llama_kv_cache::state_write`, see `KvStateFile.ts`);
 * - `kv-swa`: the sliding-window layers' KV cache, after the full-attention one (`llama_kv_cache_iswa`);
 *   its cells are read back only where the window does not mask them, so a zero state gives
 *   all of them one position;
 * - `recurrent`: a recurrent state (`llama_memory_recurrent::state_write`): cell count, per cell
 *   position and sequence ids, `s_trans`, layer count, then per stored layer R (type, row size,
 *   rows), then S likewise. Always the last part (a hybrid writes its KV cache first).
 * Which parts, in which order, comes from the model's architecture (`stateSectionsOf`); the
 * layout of each is learned from a state the engine saved, never assumed.
 */

export const stateMagic = 0x67677371; // 'ggsq'

export type StateSectionKind = "kv" | "kv-swa" | "recurrent";

export type RecurrentRowLayout = {type: number, rowBytes: number};

export type RecurrentLayout = {
    /** The model's layer count, as the state states it (layers without a recurrent state store no rows). */
    layerCount: number,
    /** Per stored layer: R (the convolution state), then S (the SSM / WKV state). One row per cell each. */
    rRows: RecurrentRowLayout[],
    sRows: RecurrentRowLayout[],
    /** Cells of one sequence (llama.cpp keeps one per sequence). */
    cells: number,
    /** R plus S bytes per cell, over all layers. */
    bytesPerCell: number
};

export type StateSection = {kind: "kv" | "kv-swa", kv: KvLayout} | {kind: "recurrent", recurrent: RecurrentLayout};

/** The layout of a whole sequence state: its parts, in file order. */
export type StateLayout = {version: number, sections: StateSection[]};

type RecurrentSectionSummary = {cellCount: number, layout: RecurrentLayout, payloadBytes: number, nonZeroPayloadBytes: number};

export type SequenceStateSummary = {
    version: number,
    tokenCount: number,
    sections: Array<{kind: "kv" | "kv-swa", kv: KvSectionSummary} | {kind: "recurrent", recurrent: RecurrentSectionSummary}>,
    /** `null` when a KV cache part holds no cell (nothing to learn a layout from). */
    layout: StateLayout | null,
    payloadBytes: number,
    nonZeroPayloadBytes: number
};

/** Payload bytes of a whole state whose KV caches hold `kvCells` cells each. */
export function stateBytes(layout: StateLayout, kvCells: number) {
    return layout.sections.reduce((sum, section) => sum + (section.kind === "recurrent"
        ? section.recurrent.bytesPerCell * section.recurrent.cells
        : section.kv.bytesPerCell * kvCells), 0);
}

/** Parses a whole state file made of `kinds`, counting non-zero payload bytes; it must end where the last part does. */
export async function readSequenceState(path: string, kinds: StateSectionKind[]): Promise<SequenceStateSummary> {
    const reader = await ChunkedReader.open(path);
    try {
        const magic = await reader.u32();
        if (magic !== stateMagic)
            throw new KvStateFormatError(`magic 0x${magic.toString(16)} is not 'ggsq'`);

        const version = await reader.u32();
        const tokenCount = await reader.u32();
        await reader.skip(tokenCount * 4);

        const summary: SequenceStateSummary = {version, tokenCount, sections: [], layout: {version, sections: []}, payloadBytes: 0, nonZeroPayloadBytes: 0};
        for (const [index, kind] of kinds.entries()) {
            if (kind === "recurrent") {
                if (index !== kinds.length - 1)
                    throw new KvStateFormatError("a recurrent state before another part");
                const recurrent = await readRecurrentSection(reader);
                summary.sections.push({kind, recurrent});
                summary.layout?.sections.push({kind, recurrent: recurrent.layout});
                summary.payloadBytes += recurrent.payloadBytes;
                summary.nonZeroPayloadBytes += recurrent.nonZeroPayloadBytes;
            } else {
                const kv = await readKvSection(reader, version);
                summary.sections.push({kind, kv});
                if (kv.layout == null)
                    summary.layout = null;
                else
                    summary.layout?.sections.push({kind, kv: kv.layout});
                summary.payloadBytes += kv.payloadBytes;
                summary.nonZeroPayloadBytes += kv.nonZeroPayloadBytes;
            }
        }
        if (reader.remaining !== 0)
            throw new KvStateFormatError(`${reader.remaining} bytes after the last layer`);
        return summary;
    } finally {
        await reader.dispose();
    }
}

/** The recurrent part; it runs to the end of the file, which is how its R rows are told from its S rows (as many of each). */
async function readRecurrentSection(reader: ChunkedReader): Promise<RecurrentSectionSummary> {
    const cellCount = await reader.u32();
    if (cellCount === 0 || cellCount > 64)
        throw new KvStateFormatError(`a recurrent state of ${cellCount} cells`);
    for (let cell = 0; cell < cellCount; cell++) {
        await reader.i32();
        const sequenceIds = await reader.u32();
        if (sequenceIds > 64)
            throw new KvStateFormatError(`recurrent cell ${cell} claims ${sequenceIds} sequence ids`);
        await reader.skip(sequenceIds * 4);
    }
    if ((await reader.u32()) !== 0)
        throw new KvStateFormatError("a transposed recurrent state");
    const layerCount = await reader.u32();
    if (layerCount === 0 || layerCount > 4096)
        throw new KvStateFormatError(`${layerCount} recurrent layers`);

    const rows: RecurrentRowLayout[] = [];
    let payloadBytes = 0;
    let nonZeroPayloadBytes = 0;
    while (reader.remaining > 0) {
        const type = await reader.i32();
        const rowBytes = await reader.u64();
        nonZeroPayloadBytes += await reader.countNonZero(rowBytes * cellCount);
        payloadBytes += rowBytes * cellCount;
        rows.push({type, rowBytes});
    }
    const stored = rows.length / 2;
    const rRows = rows.slice(0, stored);
    const sRows = rows.slice(stored);
    // Every layer's R rows have one size, and every layer's S rows another: anything else is not this format.
    if (rows.length === 0 || rows.length % 2 !== 0 || stored > layerCount ||
        rRows.some((row) => row.rowBytes !== rRows[0]!.rowBytes || row.type !== rRows[0]!.type) ||
        sRows.some((row) => row.rowBytes !== sRows[0]!.rowBytes || row.type !== sRows[0]!.type))
        throw new KvStateFormatError(`a recurrent state of ${rows.length} row sets that do not pair up as R and S of up to ${layerCount} layers`);

    return {
        cellCount, payloadBytes, nonZeroPayloadBytes,
        layout: {layerCount, rRows, sRows, cells: cellCount, bytesPerCell: rows.reduce((sum, row) => sum + row.rowBytes, 0)}
    };
}

export type ZeroStateOptions = {
    /** Token id listed once per KV cell. Defaults to `0`. */
    fillToken?: number,
    /** List no tokens at all (the capacity probe: llama.cpp then judges the KV cell count alone). Defaults to `false`. */
    omitTokens?: boolean,
    /**
     * Leave the payload as a hole in the file: it reads as zeros, and costs no writing (the scrub's
     * zero state, and the capacity probe, which llama.cpp refuses on a cell count before it reads
     * that part's payload). Defaults to `false`.
     */
    sparsePayload?: boolean,
    /** The index of a KV part written with one cell more than `kvCells` (the capacity probe). Defaults to none. */
    oversizeSection?: number
};

/**
 * Writes a state in `layout` whose KV caches each hold `kvCells` cells of sequence 0 and whose
 * recurrent state holds its learned cells, every payload byte zero. Loading it into a cleared
 * sequence overwrites every cell it occupies with zeros. The token list names `fillToken` once per
 * KV cell so that node-llama-cpp knows the cells are in use and its `clearHistory()` frees them
 * all. Returns the number of payload bytes written.
 */
export async function writeZeroSequenceState(path: string, layout: StateLayout, kvCells: number,
    {fillToken = 0, omitTokens = false, sparsePayload = false, oversizeSection}: ZeroStateOptions = {}): Promise<number> {
    const writer = await ChunkedWriter.create(path, sparsePayload);
    try {
        const tokenCount = omitTokens ? 0 : kvCells;
        await writer.u32(stateMagic, layout.version, tokenCount);
        const tokens = new Int32Array(tokenCount).fill(fillToken); // host byte order, as the cells (writeZeroKvSection)
        await writer.bytes(Buffer.from(tokens.buffer, tokens.byteOffset, tokens.byteLength));

        let payload = 0;
        for (const [index, section] of layout.sections.entries()) {
            if (section.kind === "recurrent") {
                if (oversizeSection === index)
                    throw new Error("A recurrent state is never written oversize: llama.cpp aborts on one.");
                payload += await writeZeroRecurrentSection(writer, section.recurrent, kvCells - 1);
            } else {
                const cells = kvCells + (oversizeSection === index ? 1 : 0);
                // Sliding-window cells all at one position: the window masks none of them, so all are read back.
                payload += await writeZeroKvSection(writer, section.kv, cells, section.kind === "kv-swa" ? () => 0 : (cell) => cell);
            }
        }
        return payload;
    } finally {
        await writer.dispose();
    }
}

async function writeZeroRecurrentSection(writer: ChunkedWriter, layout: RecurrentLayout, position: number): Promise<number> {
    await writer.u32(layout.cells);
    for (let cell = 0; cell < layout.cells; cell++) {
        await writer.i32(position);
        await writer.u32(0); // the sequence's own state: no sequence ids listed
    }
    await writer.u32(0, layout.layerCount);
    let payload = 0;
    for (const row of [...layout.rRows, ...layout.sRows]) {
        await writer.i32(row.type);
        await writer.u64(row.rowBytes);
        await writer.zeros(row.rowBytes * layout.cells);
        payload += row.rowBytes * layout.cells;
    }
    return payload;
}

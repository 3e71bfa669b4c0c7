import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {readKvState, writeZeroKvState, KvStateFormatError, type KvLayout} from "../../src/core/node/engine/KvStateFile.js";
import {readSequenceState, stateBytes, writeZeroSequenceState, type StateLayout} from "../../src/core/node/engine/SequenceStateFile.js";
import {ChunkedReader, ChunkedWriter} from "../../src/core/node/engine/StateFileIo.js";
import {tempDir} from "../helpers/tempCore.js";

const layout: KvLayout = {
    version: 3,
    vTransposed: false,
    layers: [
        {kType: 1, kRowBytes: 64, vType: 1, vCellBytes: 64},
        {kType: 1, kRowBytes: 32, vType: 1, vCellBytes: 32}
    ],
    bytesPerCell: 192
};

describe("KV state files", () => {
    it("writes an all-zero state that reads back with every payload byte zero", async () => {
        const file = path.join(tempDir("kv"), "zero.state");
        const written = await writeZeroKvState(file, layout, 100);
        const summary = await readKvState(file);
        expect(written).toBe(100 * 192);
        expect(summary.cellCount).toBe(100);
        expect(summary.payloadBytes).toBe(100 * 192);
        expect(summary.nonZeroPayloadBytes).toBe(0);
        expect(summary.positions).toEqual({first: 0, last: 99, ascending: true});
        expect(summary.layout?.layers).toEqual(layout.layers);
    });

    it("counts residue: a single non-zero byte anywhere in K or V is found", async () => {
        const file = path.join(tempDir("kv"), "dirty.state");
        await writeZeroKvState(file, layout, 50);
        const bytes = fs.readFileSync(file);
        const payloadStart = bytes.length - 50 * 192;
        for (const offset of [payloadStart, payloadStart + 3211, bytes.length - 1]) {
            const dirty = Buffer.from(bytes);
            dirty[offset] = 0x5a;
            fs.writeFileSync(file, dirty);
            expect((await readKvState(file)).nonZeroPayloadBytes).toBe(1);
        }
    });

    it("understands transposed V layouts", async () => {
        const file = path.join(tempDir("kv"), "vt.state");
        const transposed: KvLayout = {
            version: 3, vTransposed: true, bytesPerCell: 128,
            layers: [{kType: 1, kRowBytes: 64, vType: 1, vCellBytes: 64, vElementBytes: 2, vEmbd: 32}]
        };
        await writeZeroKvState(file, transposed, 10);
        const summary = await readKvState(file);
        expect(summary.layout).toEqual(transposed);
        expect(summary.nonZeroPayloadBytes).toBe(0);
    });

    it("rejects a file that is not a sequence state, or is cut short", async () => {
        const dir = tempDir("kv");
        fs.writeFileSync(path.join(dir, "junk.state"), Buffer.from("not a state file at all"));
        await expect(readKvState(path.join(dir, "junk.state"))).rejects.toBeInstanceOf(KvStateFormatError);

        const file = path.join(dir, "short.state");
        await writeZeroKvState(file, layout, 10);
        fs.truncateSync(file, fs.statSync(file).size - 7);
        await expect(readKvState(file)).rejects.toThrow(/needs \d+ more bytes/);
    });

    it("reads cells listed past the reader's first MiB, with any number of sequence ids, as it reads them within it (#25: cells read from the buffer, not one await per field)", async () => {
        const dir = tempDir("kv");
        const cellCount = 100_000; // 12 bytes a cell: the list runs past the first 1 MiB chunk
        const zero = path.join(dir, "many.state");
        await writeZeroKvState(zero, layout, cellCount);
        const summary = await readKvState(zero);
        expect(summary.cellCount).toBe(cellCount);
        expect(summary.positions).toEqual({first: 0, last: cellCount - 1, ascending: true});
        expect(summary.nonZeroPayloadBytes).toBe(0);

        // The same state with cell 90,000 (past the first MiB) listing three sequence ids, and its position out of order.
        const bytes = fs.readFileSync(zero);
        const cellsStart = 4 * 3 + cellCount * 4 + 4 * 2; // magic, version, token count; the tokens; stream and cell counts
        const at = cellsStart + 90_000 * 12;
        expect(bytes.readInt32LE(at)).toBe(90_000);
        const edited = Buffer.concat([bytes.subarray(0, at), Buffer.from(new Int32Array([5, 3, 0, 1, 2]).buffer), bytes.subarray(at + 12)]);
        const file = path.join(dir, "ids.state");
        fs.writeFileSync(file, edited);
        const read = await readKvState(file);
        expect(read.cellCount).toBe(cellCount);
        expect(read.positions).toEqual({first: 0, last: cellCount - 1, ascending: false});
        expect(read.layout?.layers).toEqual(layout.layers);
        expect(read.nonZeroPayloadBytes).toBe(0);

        fs.writeFileSync(file, Buffer.concat([bytes.subarray(0, at), Buffer.from(new Int32Array([5, 65]).buffer), bytes.subarray(at + 8)]));
        await expect(readKvState(file)).rejects.toThrow(/cell 90000 claims 65 sequence ids/);
    });

    it("a zero state with its payload left as a hole holds the same bytes as one written out", async () => {
        const dir = tempDir("kv");
        const state: StateLayout = {version: 3, sections: [{kind: "kv", kv: layout}]};
        await writeZeroSequenceState(path.join(dir, "written.state"), state, 300, {fillToken: 7});
        await writeZeroSequenceState(path.join(dir, "sparse.state"), state, 300, {fillToken: 7, sparsePayload: true});
        expect(fs.readFileSync(path.join(dir, "sparse.state")).equals(fs.readFileSync(path.join(dir, "written.state")))).toBe(true);
    });
});

describe("whole sequence states: several KV caches and a recurrent state", () => {
    const state: StateLayout = {version: 3, sections: [
        {kind: "kv", kv: layout},
        {kind: "kv-swa", kv: layout},
        {kind: "recurrent", recurrent: {layerCount: 4, cells: 1, bytesPerCell: 3 * 24 + 3 * 40,
            rRows: [{type: 0, rowBytes: 24}, {type: 0, rowBytes: 24}, {type: 0, rowBytes: 24}],
            sRows: [{type: 0, rowBytes: 40}, {type: 0, rowBytes: 40}, {type: 0, rowBytes: 40}]}}
    ]};
    const kinds = state.sections.map((section) => section.kind);

    it("writes a zero state of every part that reads back in the same layout, every byte zero; the sliding-window cells at one position (none masked)", async () => {
        const file = path.join(tempDir("kv"), "zero.state");
        const written = await writeZeroSequenceState(file, state, 20);
        const summary = await readSequenceState(file, kinds);
        expect(written).toBe(stateBytes(state, 20));
        expect(summary.payloadBytes).toBe(written);
        expect(summary.nonZeroPayloadBytes).toBe(0);
        expect(summary.layout).toEqual(state);
        const [full, window] = summary.sections;
        expect(full?.kind === "kv" && full.kv.positions).toEqual({first: 0, last: 19, ascending: true});
        expect(window?.kind === "kv-swa" && window.kv.positions).toEqual({first: 0, last: 0, ascending: false});
    });

    it("finds one non-zero byte in the recurrent state, and refuses a state that is not the parts asked for", async () => {
        const file = path.join(tempDir("kv"), "dirty.state");
        await writeZeroSequenceState(file, state, 20);
        const bytes = fs.readFileSync(file);
        bytes[bytes.length - 1] = 0x01;
        fs.writeFileSync(file, bytes);
        expect((await readSequenceState(file, kinds)).nonZeroPayloadBytes).toBe(1);
        await expect(readSequenceState(file, ["kv", "kv-swa"])).rejects.toThrow(/bytes after the last layer/);
        await expect(readSequenceState(file, ["kv"])).rejects.toBeInstanceOf(KvStateFormatError);
    });
});

describe("state file handles", () => {
    it("a writer left by its `await using` block has finished its sparse file (full length), and disposing either handle again is harmless", async () => {
        const file = path.join(tempDir("kv-io"), "sparse.state");
        let writerLeft: ChunkedWriter;
        {
            await using writer = await ChunkedWriter.create(file, true);
            writerLeft = writer;
            await writer.u32(7);
            await writer.zeros(4096);
        }
        expect(fs.statSync(file).size).toBe(4 + 4096);
        await expect(writerLeft.dispose()).resolves.toBeUndefined();

        let readerLeft: ChunkedReader;
        {
            await using reader = await ChunkedReader.open(file);
            readerLeft = reader;
            expect(await reader.u32()).toBe(7);
        }
        await expect(readerLeft.dispose()).resolves.toBeUndefined();
    });
});

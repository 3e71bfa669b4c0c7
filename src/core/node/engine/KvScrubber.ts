import type {LlamaContextSequence, LlamaModel, LlamaContextOptions, Token} from "node-llama-cpp";
import {readKvLayout, readKvState, writeZeroKvState, type KvLayout} from "./KvStateFile.js";
import type {PrivateScratchDir} from "./PrivateScratchDir.js";

export type ZeroAndVerifyResult = {
    kvCells: number,
    layers: number,
    bytesZeroed: number,
    bytesChecked: number,
    nonZeroBytes: number,
    cellsReadBack: number,
    verified: boolean,
    failure: string | null,
    durationMs: number
};

/**
 * Zeroes every KV cell of a sequence and proves it: loads an all-zero state that fills the
 * whole KV cache, saves it back and checks every K/V byte. The layout comes from a
 * throwaway context fed one neutral token, never from a conversation.
 */
export class KvScrubber {
    public readonly layout: KvLayout;
    public readonly kvCells: number;
    private readonly _scratch: PrivateScratchDir;

    private readonly _fillToken: number;

    private constructor(layout: KvLayout, kvCells: number, fillToken: number, scratch: PrivateScratchDir) {
        this.layout = layout;
        this._fillToken = fillToken;
        this.kvCells = kvCells;
        this._scratch = scratch;
    }

    public get kvBytes() {
        return this.layout.bytesPerCell * this.kvCells;
    }

    /**
     * Learns the layout on a throwaway context created with `contextOptions` (the same as every
     * conversation's), and checks that the KV cache holds exactly `contextSize` cells: a zero
     * state one cell larger must be refused, or the zeroing would not cover the whole cache.
     */
    public static async learn(model: LlamaModel, contextOptions: LlamaContextOptions, scratch: PrivateScratchDir): Promise<KvScrubber> {
        const context = await model.createContext({...contextOptions, sequences: 1});
        try {
            const sequence = context.getSequence();
            const neutralToken = (model.tokens.bos ?? model.tokenize(" ")[0] ?? 0) as Token;
            await sequence.evaluateWithoutGeneratingNewTokens([neutralToken]);

            const referencePath = scratch.newFilePath("layout");
            let layout: KvLayout;
            try {
                await sequence.saveStateToFile(referencePath);
                layout = await readKvLayout(referencePath);
            } finally {
                scratch.removeFile(referencePath);
            }

            const kvCells = context.contextSize;
            await sequence.clearHistory();
            const oversizePath = scratch.newFilePath("capacity");
            try {
                await writeZeroKvState(oversizePath, layout, kvCells + 1, {omitTokens: true});
                let accepted = false;
                try {
                    await sequence.loadStateFromFile(oversizePath, {acceptRisk: true});
                    accepted = true;
                } catch {
                    // expected: the cache has exactly kvCells cells
                }
                if (accepted)
                    throw new Error(`The KV cache holds more than ${kvCells} cells; a scrub of ${kvCells} cells would not cover it.`);
            } finally {
                scratch.removeFile(oversizePath);
            }

            return new KvScrubber(layout, kvCells, neutralToken, scratch);
        } finally {
            await context.dispose();
        }
    }

    public async zeroAndVerify(sequence: LlamaContextSequence): Promise<ZeroAndVerifyResult> {
        const started = performance.now();
        const result: ZeroAndVerifyResult = {
            kvCells: this.kvCells, layers: this.layout.layers.length, bytesZeroed: 0, bytesChecked: 0,
            nonZeroBytes: 0, cellsReadBack: 0, verified: false, failure: null, durationMs: 0
        };

        const zeroPath = this._scratch.newFilePath("zero");
        const readBackPath = this._scratch.newFilePath("readback");
        try {
            if (sequence.contextSize !== this.kvCells)
                throw new Error(`sequence holds ${sequence.contextSize} cells, the scrubber was learned for ${this.kvCells}`);

            await sequence.clearHistory();
            result.bytesZeroed = await writeZeroKvState(zeroPath, this.layout, this.kvCells, {fillToken: this._fillToken});
            await sequence.loadStateFromFile(zeroPath, {acceptRisk: true});
            this._scratch.removeFile(zeroPath);

            await sequence.saveStateToFile(readBackPath);
            const readBack = await readKvState(readBackPath);
            this._scratch.removeFile(readBackPath);

            result.cellsReadBack = readBack.cellCount;
            result.bytesChecked = readBack.payloadBytes;
            result.nonZeroBytes = readBack.nonZeroPayloadBytes;

            if (readBack.cellCount !== this.kvCells)
                result.failure = `read back ${readBack.cellCount} cells, expected ${this.kvCells}`;
            else if (readBack.payloadBytes !== this.kvBytes)
                result.failure = `read back ${readBack.payloadBytes} payload bytes, expected ${this.kvBytes}`;
            else if (readBack.nonZeroPayloadBytes !== 0)
                result.failure = `${readBack.nonZeroPayloadBytes} non-zero bytes remain`;
            else
                result.verified = true;

            await sequence.clearHistory();
        } catch (error) {
            result.verified = false;
            result.failure = error instanceof Error ? error.message : String(error);
        } finally {
            this._scratch.removeFile(zeroPath);
            this._scratch.removeFile(readBackPath);
            result.durationMs = performance.now() - started;
        }
        return result;
    }
}

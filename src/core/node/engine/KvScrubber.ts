import type {LlamaContextSequence, LlamaModel, LlamaContextOptions} from "node-llama-cpp";
import type {KvReadBack} from "../../common/api/types.js";
import type {KvLayoutCache} from "./KvLayoutCache.js";
import type {KvLayout} from "./KvStateFile.js";
import type {PrivateScratchDir} from "./PrivateScratchDir.js";
import {readSequenceState, stateBytes, writeZeroSequenceState, type StateLayout, type StateSectionKind} from "./SequenceStateFile.js";
import {cacheIfSingleKv, layerCount, learnOnThrowawayContext, proveCapacity, readBackOneToken, sameLayout, type LearnedState} from "./learnStateLayout.js";
import {judgeStateCoverage, sequenceMemoryOf, stateSectionsOf, type StateCoverage} from "./sequenceStateCoverage.js";

/**
 * Where the layout a scrub used came from: learned on a throwaway context at model load, taken from
 * the cache, or learned again during this scrub because the cached one was contradicted.
 */
export type KvLayoutSource = "learned" | "cached" | "relearned";

export type ZeroAndVerifyResult = {
    kvCells: number,
    layers: number,
    bytesZeroed: number,
    bytesChecked: number,
    nonZeroBytes: number,
    cellsReadBack: number,
    verified: boolean,
    failure: string | null,
    layoutSource: KvLayoutSource,
    durationMs: number,
    /**
     * `no-kv-memory`: the context keeps no KV memory (an encoder such as BERT, see `SequenceMemory`),
     * so there was nothing to zero: its state was read back and held no byte after its (cleared)
     * token list. Absent: every KV cell was zeroed and read back.
     */
    method?: "no-kv-memory"
};

export type KvScrubberOptions = {
    /** Keeps the learned layout for the next load, and gives it back. Defaults to none: learned at every load. */
    cache?: KvLayoutCache | null,
    /** Called once a contradicted cached layout was discarded and the layout learned again, with the contradiction. */
    onRelearned?: (contradiction: string) => void,
    /**
     * Layers the model offloaded to a GPU (`LlamaModel.gpuLayers`): the KV of the last ones lives in
     * device memory, and the read-back must be proved to read it from there (`kvReadBack`).
     * Defaults to `0`: every layer's KV is in RAM.
     */
    gpuLayers?: number
};

type Learned = LearnedState;

/** Whether the read-back reads the device's KV, and if not why (see `KvScrubber.kvReadBack`). */
export type KvReadBackProof = {kvReadBack: KvReadBack, problem: string | null, deviceLayers: number[]};

/**
 * Zeroes every KV cell of a sequence and proves it: loads an all-zero state that fills the
 * whole KV cache, saves it back and checks every K/V byte. The layout comes from a
 * throwaway context fed one neutral token, never from a conversation; or from the cache of an
 * earlier such learning, which every scrub then proves again (see `zeroAndVerify`).
 */
export class KvScrubber {
    private _learned: Learned;
    private _source: "learned" | "cached";
    private _relearning: Promise<void> | null = null;
    private readonly _model: LlamaModel;
    private readonly _contextOptions: LlamaContextOptions;
    private readonly _scratch: PrivateScratchDir;
    private readonly _cache: KvLayoutCache | null;
    private readonly _onRelearned: (contradiction: string) => void;
    private readonly _readBack: KvReadBackProof;
    private readonly _coverage: StateCoverage;
    private readonly _sections: StateSectionKind[];

    private constructor(learned: Learned, source: "learned" | "cached", model: LlamaModel, contextOptions: LlamaContextOptions, scratch: PrivateScratchDir,
        readBack: KvReadBackProof, coverage: StateCoverage, sections: StateSectionKind[], {cache = null, onRelearned = () => undefined}: KvScrubberOptions) {
        this._learned = learned;
        this._sections = sections;
        this._readBack = readBack;
        this._coverage = coverage;
        this._source = source;
        this._model = model;
        this._contextOptions = contextOptions;
        this._scratch = scratch;
        this._cache = cache;
        this._onRelearned = onRelearned;
    }

    /** The layout of the (first) KV cache zeroed; `null` when the state has none, or is not one the scrub can zero (`stateCoverage` says why). */
    public get layout(): KvLayout | null {
        const first = this._learned.state?.sections[0];
        return first != null && first.kind !== "recurrent" ? first.kv : null;
    }

    /** The layout of the whole state zeroed: its KV caches and recurrent state, in file order; `null` as for `layout`. */
    public get stateLayout(): StateLayout | null {
        return this._learned.state;
    }

    public get kvCells(): number {
        return this._learned.kvCells;
    }

    /** The private folder the scrub's transient files go through (a resume snapshot's state passes through it too). */
    public get scratch(): PrivateScratchDir {
        return this._scratch;
    }

    /** Payload bytes of a context's state (K plus V of its KV caches, R plus S of its recurrent state); `0` when the layout is not known. */
    public get kvBytes() {
        return this._learned.state == null ? 0 : stateBytes(this._learned.state, this.kvCells);
    }

    /**
     * Whether what a scrub zeroes and reads back is all of a sequence's state: judged from the model's
     * architecture (GGUF metadata) and from the layout of a state the engine saved. When it is not
     * (sliding-window, hybrid and recurrent models, or a state the parser does not understand),
     * every scrub of the model is reported unverified with `problem` as its failure.
     */
    public get stateCoverage(): StateCoverage {
        return this._coverage;
    }

    /**
     * `host`: the KV is in RAM. `verified`: some of it is in device memory, and the read-back was seen
     * to return what the device computed (a neutral token evaluated on a throwaway context: every
     * offloaded layer's K/V read back non-zero), so an all-zero read-back means zeros on the device.
     * `unverified`: that could not be seen; every scrub is then reported unverified (`SCRUB_UNVERIFIED`).
     */
    public get kvReadBack(): KvReadBackProof {
        return this._readBack;
    }

    /** Whether the layout in use was learned in this process or taken from the cache (and not contradicted yet). */
    public get layoutSource(): "learned" | "cached" {
        return this._source;
    }

    /**
     * The scrubber for contexts created with `contextOptions` (the same as every conversation's):
     * the cached layout when the cache has one, else learned on a throwaway context (and cached),
     * checking that the KV cache holds exactly `contextSize` cells: a zero state one cell larger
     * must be refused, or the zeroing would not cover the whole cache.
     */
    public static async learn(model: LlamaModel, contextOptions: LlamaContextOptions, scratch: PrivateScratchDir, options: KvScrubberOptions = {}): Promise<KvScrubber> {
        const gpuLayers = options.gpuLayers ?? 0;
        const architecture = model.fileInfo.metadata?.general?.architecture ?? "this model";
        // Judged from the architecture at every load: a cached layout is only ever one of a single KV cache.
        const memory = sequenceMemoryOf(model.fileInsights, model.fileInfo.metadata?.general?.architecture);
        const sections = stateSectionsOf(model.fileInsights, model.fileInfo.metadata?.general?.architecture);
        const cached = memory === "kv" ? options.cache?.read() ?? null : null;
        if (cached != null) {
            // The layout may come from the cache; whether the device's KV reads back is seen at every load.
            const readBack = gpuLayers > 0
                ? KvScrubber.proveDeviceReadBack(await readBackOneToken(model, contextOptions, scratch, sections), gpuLayers)
                : hostReadBack;
            const learned: Learned = {state: {version: cached.layout.version, sections: [{kind: "kv", kv: cached.layout}]}, kvCells: cached.kvCells, fillToken: cached.fillToken};
            return new KvScrubber(learned, "cached", model, contextOptions, scratch, readBack, judgeStateCoverage(architecture, memory, null), sections, options);
        }

        const {learned, nonZeroBytesPerLayer, formatProblem} = await learnOnThrowawayContext(model, contextOptions, scratch, sections);
        const coverage = judgeStateCoverage(architecture, memory, formatProblem);
        if (coverage.complete)
            cacheIfSingleKv(options.cache ?? null, learned);
        if (memory === "none")
            // Proved on the throwaway context: its state after one token held nothing but that token. No cell, nothing on a device.
            return new KvScrubber({...learned, kvCells: 0}, "learned", model, contextOptions, scratch, hostReadBack, coverage, sections, options);
        const readBack = gpuLayers === 0 ? hostReadBack
            : sections.length > 1
                ? {kvReadBack: "unverified" as const, problem: `the read-back from the device is proved only for a model with one KV cache, and ${architecture} keeps ${sections.join(" + ")}`, deviceLayers: []}
                : KvScrubber.proveDeviceReadBack(nonZeroBytesPerLayer, gpuLayers);
        return new KvScrubber(learned, "learned", model, contextOptions, scratch, readBack, coverage, sections, options);
    }

    /**
     * Judges a state read back from a context that evaluated one neutral token: llama.cpp offloads
     * the last `gpuLayers` layers (the output layer counts as one), and each of their KV layers must
     * read back non-zero, or the read-back does not return what the device holds.
     * @internal static so that a test can force its failure (see test/helpers/forceDeviceReadBackFault.ts)
     */
    public static proveDeviceReadBack(nonZeroBytesPerLayer: number[], gpuLayers: number): KvReadBackProof {
        const layers = nonZeroBytesPerLayer.length;
        const first = Math.max(layers + 1 - gpuLayers, 0);
        const deviceLayers = Array.from({length: Math.max(layers - first, 0)}, (_, index) => first + index);
        const blank = deviceLayers.filter((layer) => nonZeroBytesPerLayer[layer] === 0);
        if (layers === 0)
            return {kvReadBack: "unverified", problem: "the state read back held no KV layer", deviceLayers};
        if (blank.length > 0)
            return {kvReadBack: "unverified", deviceLayers,
                problem: `a token evaluated on the device read back as zeros in offloaded layer${blank.length > 1 ? "s" : ""} ${blank.join(", ")}`};
        return {kvReadBack: "verified", problem: null, deviceLayers};
    }

    /**
     * Discards the cached layout in use, which `contradiction` (what a context showed) refutes, and
     * learns it again. Nothing to do when the layout in use was learned in this process.
     */
    public async relearnCached(contradiction: string): Promise<void> {
        if (this._source !== "cached")
            return;
        this._relearning ??= (async () => {
            this._cache?.discard();
            this._learned = (await learnOnThrowawayContext(this._model, this._contextOptions, this._scratch, this._sections)).learned;
            this._source = "learned";
            cacheIfSingleKv(this._cache, this._learned);
            this._onRelearned(contradiction);
        })().finally(() => {
            this._relearning = null;
        });
        await this._relearning;
    }

    /** The report of a scrub that could not run to its end (it threw): nothing zeroed or checked is claimed. */
    public unverifiedResult(failure: string, durationMs: number): ZeroAndVerifyResult {
        return {
            kvCells: this.kvCells, layers: layerCount(this._learned.state), bytesZeroed: 0, bytesChecked: 0, nonZeroBytes: 0, cellsReadBack: 0,
            verified: false, failure, layoutSource: this._source, durationMs
        };
    }

    /**
     * Scrubs `sequence`. Each scrub proves the layout it used: llama.cpp must refuse a zero state one
     * cell larger than the cache and accept the zero state, and the state read back must have the
     * layout's cell count, layers and bytes, every byte zero. When a cached layout fails any of
     * these, the entry is discarded, the layout learned again, and the scrub done again with it.
     */
    public async zeroAndVerify(sequence: LlamaContextSequence): Promise<ZeroAndVerifyResult> {
        const started = performance.now();
        const source = this._source;
        const first = await this._zeroAndVerifyOnce(sequence);
        let result = first.result;
        if (!result.verified && first.contradicted && source === "cached") {
            await this.relearnCached(result.failure ?? "the scrub failed");
            result = {...(await this._zeroAndVerifyOnce(sequence)).result, layoutSource: "relearned"};
        }
        return {...result, durationMs: performance.now() - started};
    }

    /** One attempt; `contradicted`: its failure says the layout is wrong for this context (rather than that zeros did not stick). */
    private async _zeroAndVerifyOnce(sequence: LlamaContextSequence): Promise<{result: ZeroAndVerifyResult, contradicted: boolean}> {
        const {state: layout, kvCells, fillToken} = this._learned;
        const result: ZeroAndVerifyResult = {
            kvCells, layers: layerCount(layout), bytesZeroed: 0, bytesChecked: 0, nonZeroBytes: 0, cellsReadBack: 0,
            verified: false, failure: null, layoutSource: this._source, durationMs: 0
        };
        if (layout == null || !this._coverage.complete) {
            // Nothing here can prove the state zeroed: the history is cleared, the scrub reported unverified.
            try {
                await sequence.clearHistory();
                result.failure = this._coverage.problem ?? "the KV layout is not known";
            } catch (error) {
                result.failure = `${this._coverage.problem ?? "the KV layout is not known"}; clearing the history failed: ${error instanceof Error ? error.message : String(error)}`;
            }
            return {result, contradicted: false};
        }
        if (layout.sections.length === 0)
            return {result: await this._verifyNoMemory(sequence, layout, result), contradicted: false};
        let contradicted = true;

        const zeroPath = this._scratch.newFilePath("zero");
        const readBackPath = this._scratch.newFilePath("readback");
        try {
            if (sequence.contextSize !== kvCells)
                throw new Error(`sequence holds ${sequence.contextSize} cells, the scrubber was learned for ${kvCells}`);

            await sequence.clearHistory();
            await proveCapacity(sequence, layout, kvCells, this._scratch);
            // The zero payload is a hole in the file: it reads as zeros, costs no writing, and never holds a second KV-sized copy in RAM.
            result.bytesZeroed = await writeZeroSequenceState(zeroPath, layout, kvCells, {fillToken, sparsePayload: true});
            try {
                await sequence.loadStateFromFile(zeroPath, {acceptRisk: true});
            } catch (error) {
                throw new Error(`llama.cpp refused the zero state: ${error instanceof Error ? error.message : String(error)}`);
            }
            this._scratch.removeFile(zeroPath);

            await sequence.saveStateToFile(readBackPath);
            const readBack = await readSequenceState(readBackPath, this._sections);
            this._scratch.removeFile(readBackPath);

            const cellsOf = (section: (typeof readBack.sections)[number]) => section.kind === "recurrent" ? section.recurrent.cellCount : section.kv.cellCount;
            const expectedCells = layout.sections.map((section) => section.kind === "recurrent" ? section.recurrent.cells : kvCells);
            const cellsRead = readBack.sections.map(cellsOf);
            result.cellsReadBack = cellsRead[0] ?? 0;
            result.bytesChecked = readBack.payloadBytes;
            result.nonZeroBytes = readBack.nonZeroPayloadBytes;

            if (cellsRead.join() !== expectedCells.join())
                result.failure = `read back ${cellsRead.join(" + ")} cells, expected ${expectedCells.join(" + ")}`;
            else if (readBack.payloadBytes !== this.kvBytes)
                result.failure = `read back ${readBack.payloadBytes} payload bytes, expected ${this.kvBytes}`;
            else if (readBack.layout == null || !sameLayout(readBack.layout, layout))
                result.failure = "the state read back has another layer layout than the one zeroed";
            else if (readBack.nonZeroPayloadBytes !== 0) {
                result.failure = `${readBack.nonZeroPayloadBytes} non-zero bytes remain`;
                contradicted = false;
            } else if (this._readBack.kvReadBack === "unverified") {
                // Zeros read back, but from a read-back not seen to return what the device holds: no proof.
                result.failure = `the KV read-back from the GPU could not be verified (${this._readBack.problem ?? "unknown"}), so zeros read back prove nothing`;
                contradicted = false;
            } else {
                result.verified = true;
                contradicted = false;
            }

            await sequence.clearHistory();
        } catch (error) {
            result.verified = false;
            result.failure = error instanceof Error ? error.message : String(error);
        } finally {
            this._scratch.removeFile(zeroPath);
            this._scratch.removeFile(readBackPath);
        }
        return {result, contradicted};
    }

    /**
     * The scrub of a context that keeps no KV memory: nothing to zero, and that is proved, not assumed.
     * The history is cleared, the sequence's state saved and read back: it must be this engine's state
     * format with no token and not one byte after the token list (a KV cache, even an empty one, writes
     * its stream and cell counts there). Anything else is a failure: the scrub is unverified.
     */
    private async _verifyNoMemory(sequence: LlamaContextSequence, layout: StateLayout, result: ZeroAndVerifyResult): Promise<ZeroAndVerifyResult> {
        const readBackPath = this._scratch.newFilePath("readback");
        try {
            await sequence.clearHistory();
            await sequence.saveStateToFile(readBackPath);
            const readBack = await readSequenceState(readBackPath, []);
            if (readBack.version !== layout.version)
                return {...result, failure: `the state read back is of version ${readBack.version}, expected ${layout.version}`};
            if (readBack.tokenCount !== 0)
                return {...result, failure: `the state read back after clearing the history still lists ${readBack.tokenCount} tokens`};
            return {...result, kvCells: 0, layers: 0, verified: true, failure: null, method: "no-kv-memory"};
        } catch (error) {
            return {...result, verified: false, failure: `a context of a model without KV memory: ${error instanceof Error ? error.message : String(error)}`};
        } finally {
            this._scratch.removeFile(readBackPath);
        }
    }
}

const hostReadBack: KvReadBackProof = {kvReadBack: "host", problem: null, deviceLayers: []};


import type {LlamaContextOptions, LlamaContextSequence, LlamaModel, Token} from "node-llama-cpp";
import type {KvLayoutCache} from "./KvLayoutCache.js";
import type {KvLayout} from "./KvStateFile.js";
import type {PrivateScratchDir} from "./PrivateScratchDir.js";
import {readSequenceState, writeZeroSequenceState, type StateLayout, type StateSectionKind} from "./SequenceStateFile.js";
import {KvStateFormatError} from "./StateFileIo.js";
import {sequenceOptions} from "./sequenceOptions.js";

/**
 * How `KvScrubber` learns a model's state layout: on a throwaway context fed one neutral token,
 * never from a conversation; and how it proves each KV cache's capacity.
 */

/** What was learned; `state` null: the saved state is not one the scrub can zero (see `KvScrubber.stateCoverage`). */
export type LearnedState = {state: StateLayout | null, kvCells: number, fillToken: number};

/**
 * Learns the layout on a throwaway context. A saved state the parser does not read as one KV cache
 * (`KvStateFormatError`) is no failure to load: `formatProblem` says what was found, and the
 * scrubber then reports every scrub unverified (`judgeStateCoverage`).
 */
export async function learnOnThrowawayContext(model: LlamaModel, contextOptions: LlamaContextOptions, scratch: PrivateScratchDir, sections: StateSectionKind[]) {
    const context = await model.createContext({...contextOptions, sequences: 1});
    try {
        const sequence = context.getSequence(sequenceOptions);
        const kvCells = context.contextSize;
        const {neutralToken, layout, nonZeroBytesPerLayer, formatProblem} = await evaluateAndReadBack(sequence, scratch, sections);
        await sequence.clearHistory();
        if (layout != null)
            await proveCapacity(sequence, layout, kvCells, scratch);
        return {learned: {state: layout, kvCells, fillToken: neutralToken} satisfies LearnedState, nonZeroBytesPerLayer, formatProblem};
    } finally {
        await context.dispose();
    }
}

/** A throwaway context fed one neutral token: the non-zero bytes of each layer's KV as read back. */
export async function readBackOneToken(model: LlamaModel, contextOptions: LlamaContextOptions, scratch: PrivateScratchDir, sections: StateSectionKind[]) {
    const context = await model.createContext({...contextOptions, sequences: 1});
    try {
        return (await evaluateAndReadBack(context.getSequence(sequenceOptions), scratch, sections)).nonZeroBytesPerLayer;
    } finally {
        await context.dispose();
    }
}

async function evaluateAndReadBack(sequence: LlamaContextSequence, scratch: PrivateScratchDir, sections: StateSectionKind[]) {
    const model = sequence.model;
    const neutralToken = (model.tokens.bos ?? model.tokenize(" ")[0] ?? 0) as Token;
    await sequence.evaluateWithoutGeneratingNewTokens([neutralToken]);
    const referencePath = scratch.newFilePath("layout");
    try {
        await sequence.saveStateToFile(referencePath);
        let reference;
        try {
            reference = await readSequenceState(referencePath, sections);
        } catch (error) {
            if (!(error instanceof KvStateFormatError))
                throw error;
            return {neutralToken, layout: null, nonZeroBytesPerLayer: [], formatProblem: `its state saved after one token is not ${sections.length === 0 ? "empty after its tokens" : sections.join(" + ")}: ${error.message}`};
        }
        if (reference.layout == null)
            return {neutralToken, layout: null, nonZeroBytesPerLayer: [], formatProblem: "its state saved after one token holds a KV cache without a cell"};
        const first = reference.sections[0];
        const nonZeroBytesPerLayer = first != null && first.kind !== "recurrent" ? first.kv.nonZeroBytesPerLayer : [];
        return {neutralToken, layout: reference.layout, nonZeroBytesPerLayer, formatProblem: null};
    } finally {
        scratch.removeFile(referencePath);
    }
}

/**
 * For each KV cache of the state: a zero state whose part for it is one cell larger than `kvCells`
 * must be refused (on its cell count, before its payload is read: so the payloads are holes). A
 * recurrent state is not probed: llama.cpp aborts on a recurrent part larger than its cells (it
 * keeps one per sequence, and the contexts have one sequence; the read-back checks that count).
 */
export async function proveCapacity(sequence: LlamaContextSequence, layout: StateLayout, kvCells: number, scratch: PrivateScratchDir) {
    for (const [index, section] of layout.sections.entries()) {
        if (section.kind === "recurrent")
            continue;
        const oversizePath = scratch.newFilePath("capacity");
        try {
            await writeZeroSequenceState(oversizePath, layout, kvCells, {omitTokens: true, sparsePayload: true, oversizeSection: index});
            let accepted = false;
            try {
                await sequence.loadStateFromFile(oversizePath, {acceptRisk: true});
                accepted = true;
            } catch {
                // expected: the cache has exactly kvCells cells
            }
            if (accepted)
                throw new Error(`KV cache ${index + 1} of the state holds more than ${kvCells} cells; a scrub of ${kvCells} cells would not cover it.`);
        } finally {
            scratch.removeFile(oversizePath);
        }
    }
}

/** Layers of every part of the state that hold a conversation's data. */
export function layerCount(layout: StateLayout | null) {
    return (layout?.sections ?? []).reduce((sum, section) => sum + (section.kind === "recurrent" ? section.recurrent.rRows.length : section.kv.layers.length), 0);
}

/** Caches the layout of a state that is one KV cache (the only kind the cache keeps). */
export function cacheIfSingleKv(cache: KvLayoutCache | null, learned: LearnedState) {
    const [only, ...rest] = learned.state?.sections ?? [];
    if (only?.kind === "kv" && rest.length === 0)
        cache?.write({layout: only.kv, kvCells: learned.kvCells, fillToken: learned.fillToken, learnedAt: Date.now()});
}

export function sameLayout(left: StateLayout, right: StateLayout) {
    const describeKv = (layout: KvLayout) => [layout.version, layout.vTransposed, layout.bytesPerCell,
        layout.layers.map((layer) => [layer.kType, layer.kRowBytes, layer.vType, layer.vCellBytes, layer.vElementBytes ?? null, layer.vEmbd ?? null])];
    const describe = (layout: StateLayout) => JSON.stringify([layout.version, layout.sections.map((section) => section.kind === "recurrent"
        ? [section.kind, section.recurrent.layerCount, section.recurrent.cells, section.recurrent.rRows, section.recurrent.sRows]
        : [section.kind, describeKv(section.kv)])]);
    return describe(left) === describe(right);
}

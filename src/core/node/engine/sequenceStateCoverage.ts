import type {GgufInsights} from "node-llama-cpp";
import type {StateSectionKind} from "./SequenceStateFile.js";

/**
 * Where llama.cpp keeps a sequence's state for a model (`llama_model::create_memory`):
 * - `kv`: one KV cache (`llama_kv_cache`);
 * - `swa`: two KV caches, the full-attention layers' and the sliding-window layers' (`llama_kv_cache_iswa`);
 * - `hybrid`: a KV cache (two with sliding-window attention) and a recurrent state (`llama_memory_hybrid`);
 * - `recurrent`: a recurrent state only (`llama_memory_recurrent`: Mamba, RWKV), no KV cells at all;
 * - `none`: no memory at all (`create_memory` returns null): encoders such as BERT, which read a
 *   whole input in one evaluation and keep nothing of it between evaluations.
 */
export type SequenceMemory = "kv" | "swa" | "hybrid" | "recurrent" | "none";

/** Whether a scrub zeroes and reads back all of a sequence's state, and if not why. */
export type StateCoverage = {memory: SequenceMemory, complete: boolean, problem: string | null};

type MemoryFacts = Pick<GgufInsights, "isRecurrent" | "isHybrid" | "swaSize">;

/**
 * The architectures for which llama.cpp's `llama_model::create_memory` makes no memory (v0.4.0):
 * their contexts keep no KV cells, so a saved sequence state ends after its token list.
 */
const architecturesWithoutMemory: ReadonlySet<string> = new Set([
    "bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe", "neo-bert", "eurobert", "modern-bert",
    "gemma-embedding", "wavtokenizer-dec", "dream", "llada", "llada-moe", "rnd1"
]);

/**
 * From the model's GGUF metadata (as node-llama-cpp reads it: the same tests llama.cpp makes on the
 * architecture and hyperparameters). `none` is only what the architecture says: `KvScrubber` proves
 * it on a state the engine saved, and fails closed when the state holds anything after its tokens.
 */
export function sequenceMemoryOf(insights: MemoryFacts, architecture?: string): SequenceMemory {
    if (architecture != null && architecturesWithoutMemory.has(architecture))
        return "none";
    if (insights.isRecurrent)
        return "recurrent";
    if (insights.isHybrid)
        return "hybrid";
    if (hasSlidingWindow(insights))
        return "swa";
    return "kv";
}

/** The parts of a saved sequence state, in the order llama.cpp writes them (see `SequenceStateFile.ts`). */
export function stateSectionsOf(insights: MemoryFacts, architecture?: string): StateSectionKind[] {
    const kv: StateSectionKind[] = hasSlidingWindow(insights) ? ["kv", "kv-swa"] : ["kv"];
    switch (sequenceMemoryOf(insights, architecture)) {
        case "none": return [];
        case "recurrent": return ["recurrent"];
        case "hybrid": return [...kv, "recurrent"];
        default: return kv;
    }
}

function hasSlidingWindow(insights: MemoryFacts) {
    return insights.swaSize != null && insights.swaSize > 0;
}

const memoryDescriptions: Record<SequenceMemory, string> = {
    kv: "keeps a KV cache",
    swa: "uses sliding-window attention: its state is two KV caches (full and sliding-window layers)",
    hybrid: "is a hybrid model: its state is a KV cache and a recurrent state",
    recurrent: "is a recurrent model: its state is a recurrent state, not KV cells",
    none: "is an encoder that llama.cpp gives no KV memory: its state should end after its tokens"
};

/**
 * Judges a model's coverage: complete when the state the engine saved for it is made of exactly
 * the parts its architecture says (`stateSectionsOf`), each of which the scrub zeroes and reads
 * back, read to its last byte (`formatProblem` null). Anything else is incomplete, with the
 * reason every scrub of it reports.
 */
export function judgeStateCoverage(architecture: string, memory: SequenceMemory, formatProblem: string | null): StateCoverage {
    if (formatProblem == null)
        return {memory, complete: true, problem: null};

    return {
        memory, complete: false,
        problem: `${architecture} ${memoryDescriptions[memory]}, and ${formatProblem}; the scrub cannot zero and read back what it does not understand, so no scrub of this model is verified`
    };
}

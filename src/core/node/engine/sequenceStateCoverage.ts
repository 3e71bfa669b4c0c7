import type {GgufInsights} from "node-llama-cpp";

/**
 * Where llama.cpp keeps a sequence's state for a model (`llama_model::create_memory`):
 * - `kv`: one KV cache (`llama_kv_cache`), which the scrub zeroes and reads back cell by cell;
 * - `swa`: two KV caches, the full-attention layers' and the sliding-window layers' (`llama_kv_cache_iswa`);
 * - `hybrid`: a KV cache and a recurrent state (`llama_memory_hybrid`);
 * - `recurrent`: a recurrent state only (`llama_memory_recurrent`: Mamba, RWKV), no KV cells at all.
 */
export type SequenceMemory = "kv" | "swa" | "hybrid" | "recurrent";

/** Whether a scrub zeroes and reads back all of a sequence's state, and if not why. */
export type StateCoverage = {memory: SequenceMemory, complete: boolean, problem: string | null};

/** From the model's GGUF metadata (as node-llama-cpp reads it: the same tests llama.cpp makes on the architecture and hyperparameters). */
export function sequenceMemoryOf(insights: Pick<GgufInsights, "isRecurrent" | "isHybrid" | "swaSize">): SequenceMemory {
    if (insights.isRecurrent)
        return "recurrent";
    if (insights.isHybrid)
        return "hybrid";
    if (insights.swaSize != null && insights.swaSize > 0)
        return "swa";
    return "kv";
}

const memoryDescriptions: Record<Exclude<SequenceMemory, "kv">, string> = {
    swa: "uses sliding-window attention: its state is two KV caches (full and sliding-window layers)",
    hybrid: "is a hybrid model: its state is a KV cache and a recurrent state",
    recurrent: "is a recurrent model: its state is a recurrent state, not KV cells"
};

/**
 * Judges a model's coverage: complete only for a model with a single KV cache whose saved state the
 * parser read to its last byte (`formatProblem` null). Anything else (another kind of memory, a state
 * the parser does not understand) is incomplete, with the reason every scrub of it reports.
 */
export function judgeStateCoverage(architecture: string, memory: SequenceMemory, formatProblem: string | null): StateCoverage {
    if (memory === "kv" && formatProblem == null)
        return {memory, complete: true, problem: null};

    const what = memory === "kv" ? `${architecture}'s saved state is not the single KV cache the scrub zeroes` : `${architecture} ${memoryDescriptions[memory]}`;
    const evidence = formatProblem == null ? "" : ` (${formatProblem})`;
    return {memory, complete: false, problem: `${what}${evidence}; the scrub zeroes and reads back only a single KV cache, so no scrub of this model is verified`};
}

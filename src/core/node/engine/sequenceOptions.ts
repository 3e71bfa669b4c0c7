import type {LlamaContext} from "node-llama-cpp";

/**
 * The sequence options of every context the engine creates (see `ConversationContext`): node-llama-cpp
 * takes no interval checkpoints (copies of a sliding-window, hybrid or recurrent state in RAM, which
 * no scrub zeroes); the one it may still take after a partial erase is avoided by the caller.
 */
export const sequenceOptions = {checkpoints: {max: 1, interval: false}} as const satisfies Parameters<LlamaContext["getSequence"]>[0];

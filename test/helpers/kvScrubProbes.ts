import fs from "node:fs";
import path from "node:path";
import type {LlamaContextSequence} from "node-llama-cpp";
import {readKvState} from "../../src/core/node/engine/KvStateFile.js";
import {tempDir} from "./tempCore.js";

// What scrub.test.ts (CPU) and scrub.vulkan.test.ts (the KV on the Vulkan device, run alone) read from a sequence.

/** Evaluates a secret and `tokens` generated after it, then reads the sequence's KV state back (what a scrub must erase). */
export async function fillWithSecret(sequence: LlamaContextSequence, tokens: number) {
    let generated = 0;
    for await (const token of sequence.evaluate(sequence.model.tokenize("The secret password is swordfish 4417. Once upon a time"), {temperature: 0})) {
        void token;
        if (++generated >= tokens)
            break;
    }
    const before = path.join(tempDir("scrub"), "before.state");
    await sequence.saveStateToFile(before);
    try {
        return await readKvState(before);
    } finally {
        fs.rmSync(before);
    }
}

/** Ten greedy tokens after "Once upon a time". */
export async function greedyContinuation(sequence: LlamaContextSequence) {
    const tokens = [];
    for await (const token of sequence.evaluate(sequence.model.tokenize("Once upon a time"), {temperature: 0})) {
        tokens.push(token);
        if (tokens.length >= 10)
            break;
    }
    return sequence.model.detokenize(tokens);
}

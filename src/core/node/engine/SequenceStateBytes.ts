import fs from "node:fs/promises";
import type {LlamaContextSequence, Token} from "node-llama-cpp";
import {zeroAndRemove} from "../database/keys/durableFiles.js";
import type {PrivateScratchDir} from "./PrivateScratchDir.js";
import {stateMagic} from "./SequenceStateFile.js";

/*
 * node-llama-cpp 3.21.1 moves a sequence's state only through a file (`saveStateToFile`,
 * `loadStateFromFile`; its in-memory checkpoints stay native). So the state passes through one
 * file in the scrub's private scratch folder (mode 0700, on RAM-backed /dev/shm where there is
 * one), which is read (or loaded) at once, then overwritten with zeros, flushed and removed, also
 * when the step fails. The plain state is never written anywhere else.
 */

/** The sequence's state (llama.cpp's 'ggsq' format: its tokens, then its memory), in memory. */
export async function readSequenceState(sequence: LlamaContextSequence, scratch: PrivateScratchDir): Promise<Buffer> {
    const file = scratch.newFilePath("resume-save");
    try {
        await sequence.saveStateToFile(file);
        return await fs.readFile(file);
    } finally {
        zeroAndRemove(file);
    }
}

/** Loads a state read by `readSequenceState` into the sequence. */
export async function loadSequenceState(sequence: LlamaContextSequence, scratch: PrivateScratchDir, state: Buffer): Promise<void> {
    const file = scratch.newFilePath("resume-load");
    try {
        await fs.writeFile(file, state, {flag: "wx", mode: 0o600});
        await sequence.loadStateFromFile(file, {acceptRisk: true});
    } finally {
        zeroAndRemove(file);
    }
}

/** The tokens a state covers (its header: magic, version, token count, tokens); null when it is not a sequence state. */
export function tokensOfState(state: Buffer): Token[] | null {
    if (state.length < 12 || state.readUInt32LE(0) !== stateMagic)
        return null;
    const count = state.readUInt32LE(8);
    if (12 + count * 4 > state.length)
        return null;
    return Array.from({length: count}, (_, index) => state.readUInt32LE(12 + index * 4) as Token);
}

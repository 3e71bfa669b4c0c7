import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import type {LlamaModel, Token} from "node-llama-cpp";

export type ThreadMeasurement = {threads: number, tokensPerSecond: number, tokens: number};

export type ThreadTuning = {
    threads: number,
    measurements: ThreadMeasurement[],
    modelFingerprint: string,
    machineFingerprint: string,
    measuredAt: number
};

export type MeasureThreadsOptions = {
    /** Thread counts to try. Defaults to 1 up to the number of logical cores. */
    candidates?: number[],
    /** Tokens decoded per candidate. Defaults to `48`. */
    tokens?: number,
    /** Stops one candidate's decode after this long. Defaults to `2500` ms. */
    maxMsPerCandidate?: number
};

const defaultTokens = 48;
const defaultMaxMsPerCandidate = 2500;

export function defaultThreadCandidates() {
    const cores = Math.max(1, os.availableParallelism());
    return Array.from({length: cores}, (_, index) => index + 1);
}

/**
 * Decodes a short greedy run on a throwaway context per candidate thread count and reports
 * tokens/s. On small machines the library's default (more threads than cores) can be hundreds
 * of times slower than one thread, so the choice is measured, not guessed.
 */
export async function measureThreads(model: LlamaModel, {
    candidates = defaultThreadCandidates(), tokens = defaultTokens, maxMsPerCandidate = defaultMaxMsPerCandidate
}: MeasureThreadsOptions = {}): Promise<ThreadMeasurement[]> {
    const measurements: ThreadMeasurement[] = [];
    const startToken = (model.tokens.bos ?? model.tokenize(" ")[0] ?? 0) as Token;
    for (const threads of candidates) {
        const context = await model.createContext({contextSize: Math.min(256, model.trainContextSize), threads, sequences: 1});
        try {
            const sequence = context.getSequence();
            let generated = 0;
            let started = 0;
            for await (const token of sequence.evaluate([startToken], {temperature: 0})) {
                void token;
                if (generated === 0)
                    started = performance.now(); // the first token includes prompt evaluation: not counted
                else if (generated >= tokens || performance.now() - started > maxMsPerCandidate)
                    break;
                generated++;
            }
            const seconds = (performance.now() - started) / 1000;
            measurements.push({threads, tokens: generated - 1, tokensPerSecond: seconds > 0 ? (generated - 1) / seconds : 0});
        } finally {
            await context.dispose();
        }
    }
    return measurements;
}

export function pickBestThreads(measurements: ThreadMeasurement[]) {
    const best = measurements.reduce<ThreadMeasurement | undefined>(
        (current, next) => (current == null || next.tokensPerSecond > current.tokensPerSecond ? next : current), undefined
    );
    return best?.threads ?? 1;
}

export function machineFingerprint() {
    const cpu = os.cpus()[0]?.model ?? "unknown-cpu";
    return crypto.createHash("sha256")
        .update([os.hostname(), cpu, os.availableParallelism(), process.arch, os.totalmem()].join("|"))
        .digest("hex").slice(0, 16);
}

/** Size, plus a hash of the first MiB (header and the start of the weights): cheap, and changes when the file does. */
export function modelFingerprint(modelPath: string) {
    const {size} = fs.statSync(modelPath);
    const head = Buffer.alloc(Math.min(size, 1 << 20));
    const fd = fs.openSync(modelPath, "r");
    try {
        fs.readSync(fd, head, 0, head.length, 0);
    } finally {
        fs.closeSync(fd);
    }
    return crypto.createHash("sha256").update(head).update(String(size)).digest("hex").slice(0, 16);
}

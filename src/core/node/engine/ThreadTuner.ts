import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import type {LlamaModel, Token} from "node-llama-cpp";
import {cpuModelName} from "./cpuModelName.js";
import {fileIdentity} from "./fileIdentity.js";

/** Why a candidate's decode ended: its token budget, its time budget, or it was clearly slower than the best so far. */
export type ThreadMeasurementStop = "tokens" | "time" | "slower";

export type ThreadMeasurement = {threads: number, tokensPerSecond: number, tokens: number, stopped?: ThreadMeasurementStop};

export type ThreadTuning = {
    threads: number,
    measurements: ThreadMeasurement[],
    modelFingerprint: string,
    machineFingerprint: string,
    /** The llama.cpp build and libuv pool the measurement ran on, e.g. `prebuilt v0.4.0 cpu pool 1`. */
    backend?: string,
    measuredAt: number
};

export type MeasureThreadsOptions = {
    /** Thread counts to try, in this order. Defaults to 1, 2, 4, … below the number of logical cores, then that number. */
    candidates?: number[],
    /** Tokens decoded per candidate. Defaults to `48`. */
    tokens?: number,
    /** Stops one candidate's decode after this long. Defaults to `1500` ms. */
    maxMsPerCandidate?: number,
    /**
     * A candidate is stopped, and no larger count tried, once it is this many times slower than the
     * best so far. Defaults to `2`.
     */
    slowerBy?: number
};

const defaultTokens = 48;
const defaultMaxMsPerCandidate = 1500;
const defaultSlowerBy = 2;
/** Tokens a candidate decodes before it can be judged slower (one token's time is too noisy alone). */
const tokensBeforeJudging = 3;
/** The first decode also sets the context up: it counts as slower only past this many times the limit. */
const firstDecodeAllowance = 12;
/** Stored with each tuning; a tuning from an older tuner is measured again. */
export const threadTunerVersion = 2;

export function defaultThreadCandidates(cores = Math.max(1, os.availableParallelism())) {
    const candidates: number[] = [];
    for (let threads = 1; threads < cores; threads *= 2)
        candidates.push(threads);
    candidates.push(cores);
    return candidates;
}

/**
 * Decodes a short greedy run on a throwaway context per candidate thread count and reports
 * tokens/s. More threads can be hundreds of times slower than one (spinning threads that have
 * no core of their own, on a busy or small machine), so the choice is measured, not guessed,
 * and each candidate is bounded: by tokens, by time, and by how much slower than the best so
 * far it already is. Once a candidate is clearly slower, larger counts are not tried.
 */
export async function measureThreads(model: LlamaModel, {
    candidates = defaultThreadCandidates(), tokens = defaultTokens, maxMsPerCandidate = defaultMaxMsPerCandidate,
    slowerBy = defaultSlowerBy
}: MeasureThreadsOptions = {}): Promise<ThreadMeasurement[]> {
    const measurements: ThreadMeasurement[] = [];
    const startToken = (model.tokens.bos ?? model.tokenize(" ")[0] ?? 0) as Token;
    let bestMsPerToken = Number.POSITIVE_INFINITY;
    for (const threads of candidates) {
        const measurement = await measureOne(model, startToken, threads, {tokens, maxMs: maxMsPerCandidate, slowerThanMs: bestMsPerToken * slowerBy});
        measurements.push(measurement);
        if (measurement.stopped === "slower")
            break;
        if (measurement.tokensPerSecond > 0)
            bestMsPerToken = Math.min(bestMsPerToken, 1000 / measurement.tokensPerSecond);
    }
    return measurements;
}

async function measureOne(model: LlamaModel, startToken: Token, threads: number, limits: {tokens: number, maxMs: number, slowerThanMs: number}) {
    const context = await model.createContext({contextSize: Math.min(256, model.trainContextSize), threads, sequences: 1});
    try {
        const sequence = context.getSequence();
        let timed = 0;
        let started = 0;
        let stopped: ThreadMeasurementStop = "tokens";
        const evaluationStarted = performance.now();
        for await (const token of sequence.evaluate([startToken], {temperature: 0})) {
            void token;
            const now = performance.now();
            if (started === 0) {
                // The first token includes the prompt's evaluation: not counted, but a candidate
                // whose first single-token decode already took many times the best per-token time is done.
                started = now;
                if (now - evaluationStarted > limits.slowerThanMs * firstDecodeAllowance) {
                    stopped = "slower";
                    break;
                }
                continue;
            }
            timed++;
            const elapsed = now - started;
            if (timed >= limits.tokens)
                break;
            if (timed >= tokensBeforeJudging && elapsed / timed > limits.slowerThanMs) {
                stopped = "slower";
                break;
            }
            if (elapsed > limits.maxMs) {
                stopped = "time";
                break;
            }
        }
        const seconds = (performance.now() - started) / 1000;
        return {threads, tokens: timed, tokensPerSecond: timed > 0 && seconds > 0 ? timed / seconds : 0, stopped};
    } finally {
        await context.dispose();
    }
}

export function pickBestThreads(measurements: ThreadMeasurement[]) {
    const best = measurements.reduce<ThreadMeasurement | undefined>(
        (current, next) => (current == null || next.tokensPerSecond > current.tokensPerSecond ? next : current), undefined
    );
    return best?.threads ?? 1;
}

export function machineFingerprint() {
    const cpu = cpuModelName() ?? "unknown-cpu";
    return crypto.createHash("sha256")
        .update([os.hostname(), cpu, os.availableParallelism(), process.arch, os.totalmem()].join("|"))
        .digest("hex").slice(0, 16);
}

/**
 * Size, plus a hash of the first MiB (header and the start of the weights): cheap, and changes when the file does.
 * A model load asks for it several times (thread count, KV layout, resume binding): the hash is kept
 * for as long as the file's identity and times are the same (`fileIdentity`), so the MiB is read once.
 */
export function modelFingerprint(modelPath: string) {
    const stat = fs.statSync(modelPath, {bigint: true});
    const size = Number(stat.size);
    const identity = fileIdentity(stat);
    const known = modelFingerprints.get(modelPath);
    if (known?.identity === identity)
        return known.fingerprint;
    const head = Buffer.alloc(Math.min(size, 1 << 20));
    const fd = fs.openSync(modelPath, "r");
    try {
        fs.readSync(fd, head, 0, head.length, 0);
    } finally {
        fs.closeSync(fd);
    }
    const fingerprint = crypto.createHash("sha256").update(head).update(String(size)).digest("hex").slice(0, 16);
    modelFingerprints.set(modelPath, {identity, fingerprint});
    return fingerprint;
}

const modelFingerprints = new Map<string, {identity: string, fingerprint: string}>();

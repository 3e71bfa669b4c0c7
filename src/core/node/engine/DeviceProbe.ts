import crypto from "node:crypto";
import type {LlamaContextOptions, LlamaContextSequence, LlamaModel, Token} from "node-llama-cpp";
import {sequenceOptions} from "./sequenceOptions.js";

/** One request's greedy run: the tokens chosen and a digest of each step's full probability list. */
export type ProbeTrace = {tokens: Token[], stepDigests: string[]};

/** The probe's verdict: whether the request after the canary ran exactly as on a fresh context. */
export type DeviceProbeVerdict = {passed: boolean, problem: string | null};

export type DeviceProbeResult = DeviceProbeVerdict & {
    /** Wall time of the whole probe (both contexts), in milliseconds. */
    durationMs: number,
    /** Tokens generated per request. */
    steps: number
};

export type DeviceProbeOptions = {
    /** Tokens generated per request. Defaults to `4`. */
    steps?: number,
    /** Cells per sequence of the probe's contexts. Defaults to `64` (at most the model's trained context). */
    contextSize?: number
};

const defaultSteps = 4;
const defaultProbeContextSize = 64;
const requestText = "Once upon a time";

/**
 * The differential probe of a GPU device (llama.cpp #28056: KV contamination across requests on
 * integrated GPUs). Two contexts with two sequences each, the options of a conversation's context
 * otherwise: on the first, fresh, the request runs in sequence 1 (sequence 0 never used); on the
 * second, sequence 0 is fed a random canary first and kept, then the same request runs in
 * sequence 1. A device that keeps sequences (and requests) apart gives the second request the same
 * greedy tokens and bit-identical probabilities at every step; any difference means another
 * sequence's data reached it.
 */
export class DeviceProbe {
    public static async run(model: LlamaModel, contextOptions: LlamaContextOptions, options: DeviceProbeOptions = {}): Promise<DeviceProbeResult> {
        const started = performance.now();
        const steps = options.steps ?? defaultSteps;
        const contextSize = Math.min(options.contextSize ?? defaultProbeContextSize, model.trainContextSize);
        const probeOptions: LlamaContextOptions = {...contextOptions, contextSize, batchSize: Math.min(contextSize, 64), sequences: 2};
        const request = model.tokenize(requestText);
        // Random each time, so that nothing the device kept from an earlier probe can pass for it.
        const canary = model.tokenize(`The secret code is ${crypto.randomBytes(4).toString("hex")}.`);

        const reference = await withContext(model, probeOptions, async (empty, other) => {
            void empty;
            return traceGreedy(other, request, steps);
        });
        const afterCanary = await withContext(model, probeOptions, async (canarySequence, other) => {
            await canarySequence.evaluateWithoutGeneratingNewTokens(canary);
            return traceGreedy(other, request, steps);
        });
        return {...DeviceProbe.compare(reference, afterCanary), durationMs: performance.now() - started, steps};
    }

    /**
     * Same tokens and bit-identical probabilities at every step, or the first step that differs.
     * @internal static so that a test can force its failure (see test/helpers/forceDeviceProbeFault.ts)
     */
    public static compare(reference: ProbeTrace, afterCanary: ProbeTrace): DeviceProbeVerdict {
        if (reference.stepDigests.length === 0)
            return {passed: false, problem: "the probe's request generated no token"};
        const steps = Math.max(reference.stepDigests.length, afterCanary.stepDigests.length);
        for (let step = 0; step < steps; step++) {
            if (reference.tokens[step] !== afterCanary.tokens[step])
                return {passed: false, problem: `with a canary in another sequence, the request's token ${step + 1} differs from a fresh context's`};
            if (reference.stepDigests[step] !== afterCanary.stepDigests[step])
                return {passed: false, problem: `with a canary in another sequence, the request's probabilities at token ${step + 1} differ from a fresh context's`};
        }
        return {passed: true, problem: null};
    }
}

async function withContext<T>(model: LlamaModel, options: LlamaContextOptions, work: (first: LlamaContextSequence, second: LlamaContextSequence) => Promise<T>): Promise<T> {
    const context = await model.createContext(options);
    try {
        return await work(context.getSequence(sequenceOptions), context.getSequence(sequenceOptions));
    } finally {
        await context.dispose();
    }
}

async function traceGreedy(sequence: LlamaContextSequence, prompt: Token[], steps: number): Promise<ProbeTrace> {
    const trace: ProbeTrace = {tokens: [], stepDigests: []};
    for await (const output of sequence.evaluateWithMetadata(prompt, {probabilities: true}, {temperature: 0})) {
        trace.tokens.push(output.token);
        trace.stepDigests.push(digestProbabilities(output.probabilities));
        if (trace.tokens.length >= steps)
            break;
    }
    return trace;
}

/** SHA-256 of every (token, probability) pair in order, the probability's 64 bits as they are. */
function digestProbabilities(probabilities: Map<Token, number>) {
    const pairs = Buffer.alloc(probabilities.size * 12);
    let offset = 0;
    for (const [token, probability] of probabilities) {
        pairs.writeInt32LE(token, offset);
        pairs.writeDoubleLE(probability, offset + 4);
        offset += 12;
    }
    return crypto.createHash("sha256").update(pairs).digest("hex");
}

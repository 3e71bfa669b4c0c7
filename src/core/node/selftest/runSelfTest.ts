import crypto from "node:crypto";
import {CleanroomError, ContextOverflowError} from "../../common/errors.js";
import {Core} from "../Core.js";
import {createCoreServices} from "../createCoreServices.js";
import type {GpuSetting} from "../../common/api/types.js";
import type {LoadedModelInfo} from "../engine/LocalEngine.js";
import {loadLlama} from "../engine/loadLlama.js";
import {compareProbes, probeGreedyReply, type ProbeRequest, type ProbeResult} from "./probe.js";

export type SelfTestCheck = {name: string, passed: boolean, detail: string, data?: Record<string, unknown>};
export type SelfTestReport = {
    passed: boolean, model: string, threads: number, contextSize: number,
    /** Set when the context size asked for was above the model's trained context and capped (see `LoadedModelInfo`). */
    contextSizeNotice: string | null,
    /** Where the model ran (see `LoadedModelInfo`): the GPU backend (`null`: the CPU), its device, the layers offloaded, whether the device's KV reads back. */
    gpu: LoadedModelInfo["gpu"], gpuDevice: string | null, gpuLayers: number, modelLayers: number, kvReadBack: LoadedModelInfo["kvReadBack"],
    /** The GPU device's isolation probe (see `LoadedModelInfo`): `null` on the CPU; failed, the model ran on the CPU. */
    deviceCheck: LoadedModelInfo["deviceCheck"],
    /** Where the model keeps a conversation's state, and whether a scrub zeroes all of it (see `LoadedModelInfo`). */
    architecture: string, sequenceMemory: LoadedModelInfo["sequenceMemory"], stateCovered: boolean, stateCoverageProblem: string | null,
    checks: SelfTestCheck[]
};

export type SelfTestOptions = {
    modelPath: string,
    /** Defaults to the measured best for this machine. */
    threads?: number,
    /** Tokens per context. Defaults to `512`. */
    contextSize?: number,
    /** Where the model runs. Defaults to `$CLEANROOM_GPU`, else `auto` (see `loadLlama`). */
    gpu?: GpuSetting,
    /** Computes a probe in a new process (same model, threads and GPU setting). */
    probeInFreshProcess: (request: ProbeRequest & {threads: number, contextSize: number, gpu: GpuSetting}) => Promise<ProbeResult>
};

export const selfTestSystemPrompt = "You are a storyteller.";

/**
 * Proves isolation on this machine with the real model, in a private in-memory database:
 * scrub, differential, overflow and ownership. Passes only if every check does.
 */
export async function runSelfTest({modelPath, threads, contextSize = 512, gpu, probeInFreshProcess}: SelfTestOptions): Promise<SelfTestReport> {
    // The checks look inside the engine and the store (context tokens, ownership), so the self-test keeps its services.
    const services = createCoreServices(await loadLlama(gpu), {database: ":memory:", engine: {threads, contextSize, pool: {idleTimeoutMs: 0}}});
    const {engine, store} = services;
    const core = new Core(services);
    const checks: SelfTestCheck[] = [];
    // A check that throws (a scrub that cannot be verified, for one) fails with the error's message; the others still run.
    const run = async (name: string, work: () => Promise<Omit<SelfTestCheck, "name">>) => {
        try {
            checks.push({name, ...await work()});
        } catch (error) {
            checks.push({name, passed: false, detail: error instanceof Error ? error.message : String(error)});
        }
    };
    let info: LoadedModelInfo;
    try {
        info = await core.loadModel(modelPath);
        const secret = `vault code ${crypto.randomInt(100000, 999999)} for ${crypto.randomBytes(4).toString("hex")}`;

        // scrub: A holds a secret, its session ends, every KV byte read back must be zero.
        const a = core.createConversation({title: "A", settings: {systemPrompt: selfTestSystemPrompt}});
        await run("scrub", async () => {
            await core.sendMessage({conversationId: a.id, text: `Remember this: ${secret}. Once upon a time`, maxTokens: 24, temperature: 0});
            const scrub = await core.closeConversation(a.id, "selftest");
            return {
                passed: scrub != null && scrub.verified && scrub.nonZeroBytes === 0 && scrub.bytesChecked > 0,
                detail: scrub == null
                    ? "no context was open for A"
                    : `${describeState(info)}: ${scrub.bytesChecked} bytes checked, ${scrub.nonZeroBytes} non-zero, ${scrub.durationMs.toFixed(1)} ms; ${describeWhereKvLives(info)}`,
                data: scrub ?? undefined
            };
        });

        // differential: B after A in this process must match B in a process that never saw A.
        await run("differential", async () => {
            const request: ProbeRequest = {systemPrompt: selfTestSystemPrompt, prompt: "Once upon a time there was a little cat", maxTokens: 32};
            const afterA = await probeGreedyReply(core, request);
            const fresh = await probeInFreshProcess({...request, threads: info.threads, contextSize: info.contextSize, gpu: info.gpuRequested});
            const comparison = compareProbes(afterA, fresh);
            return {
                passed: comparison.identical,
                detail: `reply ${comparison.sameReply ? "identical" : "DIFFERS"}; ${comparison.probabilities} first-token probabilities, ` +
                    `${comparison.differingProbabilities} differ (threads ${info.threads}${info.gpu != null ? `, ${info.gpu} in both processes` : ""})`,
                data: comparison
            };
        });

        // overflow: a turn larger than the context is refused and nothing is evaluated or stored.
        const b = core.createConversation({title: "B", settings: {systemPrompt: selfTestSystemPrompt}});
        await run("overflow", async () => {
            await core.sendMessage({conversationId: b.id, text: "Once upon a time", maxTokens: 8, temperature: 0});
            const tokensBefore = engine.pool?.peek(b.id)?.tokensInContext ?? -1;
            const messagesBefore = store.messages(b.id).length;
            let refusal: unknown = null;
            try {
                await core.sendMessage({conversationId: b.id, text: "story ".repeat(info.contextSize), maxTokens: 16, temperature: 0});
            } catch (error) {
                refusal = error;
            }
            const tokensAfter = engine.pool?.peek(b.id)?.tokensInContext ?? -1;
            const messagesAfter = store.messages(b.id).length;
            return {
                passed: refusal instanceof ContextOverflowError && tokensAfter === tokensBefore && messagesAfter === messagesBefore,
                detail: refusal instanceof ContextOverflowError
                    ? `refused: ${refusal.message} Context tokens ${tokensBefore} -> ${tokensAfter}, messages ${messagesBefore} -> ${messagesAfter}.`
                    : `NOT refused (${refusal instanceof Error ? refusal.message : "no error"})`
            };
        });

        // ownership: A's context cannot serve B.
        await run("ownership", async () => {
            const {context: contextOfA} = await engine.pool!.open(a.id);
            let ownershipError: unknown = null;
            try {
                await contextOfA.generate(b.id, {promptTokens: [1 as never], maxTokens: 1, temperature: 0});
            } catch (error) {
                ownershipError = error;
            }
            return {
                passed: ownershipError instanceof CleanroomError && ownershipError.code === "CONTEXT_OWNERSHIP",
                detail: ownershipError instanceof Error ? ownershipError.message : "A's context served B"
            };
        });

    } finally {
        // Every session still open is scrubbed at shutdown; one that cannot be verified fails the self-test too.
        await run("shutdown", async () => {
            await core.dispose();
            return {passed: true, detail: "every remaining session scrubbed and verified"};
        });
    }
    return {
        passed: checks.every((check) => check.passed), model: modelPath, threads: info.threads, contextSize: info.contextSize,
        contextSizeNotice: info.contextSizeNotice, gpu: info.gpu, gpuDevice: info.gpuDevice, gpuLayers: info.gpuLayers, modelLayers: info.modelLayers,
        kvReadBack: info.kvReadBack, deviceCheck: info.deviceCheck, architecture: info.architecture, sequenceMemory: info.sequenceMemory,
        stateCovered: info.stateCovered, stateCoverageProblem: info.stateCoverageProblem, checks
    };
}

/** What the scrub zeroed and read back, by the kind of state the model keeps. */
function describeState(info: LoadedModelInfo) {
    switch (info.sequenceMemory) {
        case "kv": return `KV cache of ${info.contextSize} cells`;
        case "swa": return `2 KV caches (full and sliding-window layers) of ${info.contextSize} cells`;
        case "hybrid": return `KV cache of ${info.contextSize} cells + recurrent state`;
        case "recurrent": return "recurrent state";
    }
}

function describeWhereKvLives(info: LoadedModelInfo) {
    if (info.gpu == null)
        return "in RAM (CPU)";
    const readBack = info.kvReadBack === "verified" ? "read back from the device, verified" : `read-back from the device NOT verified: ${info.kvReadBackProblem ?? ""}`;
    return `${info.gpuLayers} of ${info.modelLayers} layers on ${info.gpu} (${info.gpuDevice ?? "unnamed device"}), KV ${readBack}`;
}

/**
 * One configuration of the thread matrix (bench/threadMatrix.ts), in a process of its own: the
 * libuv pool size and the llama.cpp build are fixed when a process starts. Measures plain
 * node-llama-cpp and Cleanroom, interleaved, at each thread count: generation tokens/s and
 * prefill tokens/s (a history of about 1,000 tokens). Prints one JSON line on stdout.
 *
 *   tsx bench/threadsChild.ts '{"model": "...", "threads": [1, 2, 4], "tokens": 64, "runs": 3, "maxMs": 3000}'
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {getLlama, LlamaLogLevel, type LlamaModel} from "node-llama-cpp";
import {Core} from "../src/core/node/Core.js";
import {createCoreServices} from "../src/core/node/createCoreServices.js";
import {describeLlamaBuild} from "../src/core/node/engine/describeLlamaBuild.js";
import {loadLlama} from "../src/core/node/engine/loadLlama.js";
import {startupThreadpoolSize} from "../src/core/node/engine/startupThreadpoolSize.js";
import {plainRun} from "./plainNodeLlamaCpp.js";
import {median, round} from "./stats.js";

export type ThreadsChildInput = {
    model: string, threads: number[], tokens: number, runs: number, maxMs: number, prefillTokens: number,
    /** A GPU backend ("vulkan", "cuda", "metal"): plain node-llama-cpp offloads every layer to it; Cleanroom runs as its engine decides. */
    gpu?: string
};
export type EngineFigures = {generation: number, prefill: number};
export type ThreadsChildOutput = {
    llamaBuild: string,
    uvThreadpoolSize: number,
    /** With `gpu`: the device, and the layers each engine offloaded (Cleanroom's figures are CPU figures when it offloaded none). */
    gpu: {backend: string, device: string | null, plainGpuLayers: number, cleanroomGpuLayers: number} | null,
    byThreads: Record<string, {plain: EngineFigures, cleanroom: EngineFigures, prefillPromptTokens: number}>
};

const input = JSON.parse(process.argv[2] ?? "{}") as ThreadsChildInput;
const prompt = "Once upon a time, in a small house near the woods, there lived a girl who loved";
const filler = "The girl and her dog walked to the park and played with a red ball under the big tree. ";
const llama = await loadLlama();
// Plain node-llama-cpp on the GPU: its own backend, every layer offloaded.
const gpuLlama = input.gpu == null ? null : await getLlama({gpu: input.gpu as "vulkan", build: "never", logLevel: LlamaLogLevel.error});
const gpuModel = gpuLlama == null ? null : await gpuLlama.loadModel({modelPath: input.model, gpuLayers: "max"});
let cleanroomGpuLayers = 0;

async function measure(threads: number) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-threads-"));
    // Resume snapshots off: the prefill figure is a whole history evaluated again, never a snapshot restored (one that
    // fits the snapshot cap, such as a 350-token history of the 86M model, would otherwise be restored from the second run on).
    const services = createCoreServices(llama, {database: path.join(dir, "bench.db"), engine: {threads, contextSize: 2048, pool: {idleTimeoutMs: 0}}, resume: {enabled: false}});
    // The bench builds long histories and compares with plain node-llama-cpp on the same model, so it keeps the services.
    const {engine, store} = services;
    const core = new Core(services);
    try {
        await core.loadModel(input.model);
        cleanroomGpuLayers = engine.model!.gpuLayers;
        const model: LlamaModel = gpuModel ?? engine.model!;
        const settings = core.createConversation().settings;
        const short = engine.preparePrompt({settings, history: [], userText: prompt, maxTokens: input.tokens});

        // A conversation whose stored history renders to about `prefillTokens` tokens.
        const long = core.createConversation({settings: {historyPolicy: "refuse"}});
        const history = () => store.messages(long.id).map((message) => ({role: message.role, content: message.content}));
        while (engine.preparePrompt({settings: long.settings, history: history(), userText: "x", maxTokens: 1}).tokens.length < input.prefillTokens) {
            store.appendMessage(long.id, {role: "user", content: filler, status: "complete"});
            store.appendMessage(long.id, {role: "assistant", content: filler, status: "complete", route: "local"});
        }
        const question = "What happened then?";
        const longPrompt = engine.preparePrompt({settings: long.settings, history: history(), userText: question, maxTokens: 1});

        const plain = {generation: [] as number[], prefill: [] as number[]};
        const cleanroom = {generation: [] as number[], prefill: [] as number[]};
        const runPlain = async () => {
            plain.generation.push((await plainRun(model, short.tokens, threads, input.tokens, input.maxMs)).tokensPerSecond);
            plain.prefill.push((await plainRun(model, longPrompt.tokens, threads, 1)).prefillTokensPerSecond);
        };
        const runCleanroom = async () => {
            const conversation = core.createConversation();
            // Stopped `maxMs` after its first token, as the plain run is: the context's creation and the prompt are not in
            // the window (a whole-turn timeout left no token at all on a slow device, such as the 86M model on llvmpipe).
            const stop = new AbortController();
            let stopTimer: NodeJS.Timeout | undefined;
            const turn = await core.sendMessage({conversationId: conversation.id, text: prompt, maxTokens: input.tokens, temperature: 0, route: "local"}, {
                signal: stop.signal, onText: () => stopTimer ??= setTimeout(() => stop.abort(), input.maxMs)
            });
            clearTimeout(stopTimer);
            await core.closeConversation(conversation.id);
            cleanroom.generation.push(turn.timings.tokensPerSecond ?? 0);

            await core.closeConversation(long.id, "evict"); // a fresh context: the whole history is evaluated
            const resumed = await core.sendMessage({conversationId: long.id, text: question, maxTokens: 1, temperature: 0, route: "local"});
            if (resumed.tokens.evaluated !== longPrompt.tokens.length)
                throw new Error(`The prefill run evaluated ${resumed.tokens.evaluated} of the history's ${longPrompt.tokens.length} tokens: not a prefill.`);
            cleanroom.prefill.push(resumed.tokens.evaluated / ((resumed.timings.firstTokenMs ?? NaN) / 1000));
            store.deleteMessage(resumed.assistantMessageId);
            store.deleteMessage(resumed.userMessageId);
        };
        // ABBA, so that whatever the first of a pair gains or loses is shared by both.
        for (let run = 0; run < input.runs; run++) {
            for (const step of run % 2 === 0 ? [runCleanroom, runPlain] : [runPlain, runCleanroom])
                await step();
        }
        const figures = (runs: {generation: number[], prefill: number[]}) => ({generation: round(median(runs.generation), 1), prefill: round(median(runs.prefill), 1)});
        return {plain: figures(plain), cleanroom: figures(cleanroom), prefillPromptTokens: longPrompt.tokens.length};
    } finally {
        await core.dispose();
        fs.rmSync(dir, {recursive: true, force: true});
    }
}

const output: ThreadsChildOutput = {llamaBuild: describeLlamaBuild(llama), uvThreadpoolSize: startupThreadpoolSize(), gpu: null, byThreads: {}};
for (const threads of input.threads)
    output.byThreads[threads] = await measure(threads);
if (gpuLlama != null && gpuModel != null)
    output.gpu = {backend: gpuLlama.gpu || "none", device: (await gpuLlama.getGpuDeviceNames())[0] ?? null, plainGpuLayers: gpuModel.gpuLayers, cleanroomGpuLayers};
process.stdout.write(JSON.stringify(output) + "\n");

import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import {Command} from "commander";
import type {LlamaModel, Token} from "node-llama-cpp";
import {Core} from "../src/core/node/Core.js";
import {loadLlama} from "../src/core/node/engine/loadLlama.js";
import {measureThreads, pickBestThreads} from "../src/core/node/engine/ThreadTuner.js";
import {median, round} from "./stats.js";
import {findLlamaBench, rawGenerationTokensPerSecond} from "./rawLlamaCpp.js";
import {benchScanner} from "./scannerBench.js";

type Options = {model: string, json?: boolean, tokens: number, runs: number, out?: string};

const program = new Command()
    .option("--model <gguf>", "model to measure", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--tokens <n>", "tokens generated per run", (value) => Number(value), 256)
    .option("--runs <n>", "interleaved runs per engine", (value) => Number(value), 12)
    .option("--out <file>", "also write the JSON report here", "bench-results/bench.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const options = program.opts<Options>();
const log = (line: string) => (options.json === true ? process.stderr : process.stdout).write(line + "\n");

const llama = await loadLlama();
const prompt = "Once upon a time, in a small house near the woods, there lived a girl who loved";

/** Plain node-llama-cpp: the same model, threads and prompt tokens, greedy, no Cleanroom in the way. */
async function plainTokensPerSecond(model: LlamaModel, promptTokens: Token[], threads: number, maxTokens: number, maxMs = Number.POSITIVE_INFINITY) {
    const context = await model.createContext({contextSize: 2048, threads, sequences: 1});
    try {
        const sequence = context.getSequence();
        let generated = 0;
        let firstAt = 0;
        let lastAt = 0;
        for await (const token of sequence.evaluate(promptTokens, {temperature: 0})) {
            if (model.isEogToken(token))
                break;
            lastAt = performance.now();
            if (generated === 0)
                firstAt = lastAt;
            if (++generated >= maxTokens || lastAt - firstAt > maxMs)
                break;
        }
        return {tokens: generated, tokensPerSecond: (generated - 1) / ((lastAt - firstAt) / 1000)};
    } finally {
        await context.dispose();
    }
}

async function main() {
    const model = await llama.loadModel({modelPath: options.model});
    const measurements = await measureThreads(model);
    const tunedThreads = pickBestThreads(measurements);
    await model.dispose();

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-"));
    const core = Core.create(llama, {database: path.join(dir, "bench.db"), engine: {threads: tunedThreads, contextSize: 2048, pool: {idleTimeoutMs: 0}}});
    await core.loadModel(options.model);
    const plainModel = core.engine.model!;
    const settings = core.createConversation().settings;
    const prepared = core.engine.preparePrompt({settings: {...settings, sampling: {...settings.sampling, maxTokens: options.tokens}}, history: [], userText: prompt});

    // 1. Generation speed, side by side, interleaved so that machine noise hits both alike.
    const cleanroomRuns: number[] = [];
    const plainRuns: number[] = [];
    const firstTokenMs: number[] = [];
    let generatedTokens = 0;
    await plainTokensPerSecond(plainModel, prepared.tokens, tunedThreads, 16); // warm-up
    const runCleanroom = async () => {
        const conversation = core.createConversation();
        const result = await core.sendMessage({conversationId: conversation.id, text: prompt, maxTokens: options.tokens, temperature: 0});
        await core.closeConversation(conversation.id);
        cleanroomRuns.push(result.timings.tokensPerSecond ?? 0);
        firstTokenMs.push(result.timings.firstTokenMs ?? NaN);
        generatedTokens = result.tokens.generated;
    };
    const runPlain = async () => {
        plainRuns.push((await plainTokensPerSecond(plainModel, prepared.tokens, tunedThreads, generatedTokens || options.tokens)).tokensPerSecond);
    };
    // ABBA order, so that whatever the first of a pair gains or loses is shared by both.
    for (let run = 0; run < options.runs; run++) {
        if (run % 2 === 0) {
            await runCleanroom();
            await runPlain();
        } else {
            await runPlain();
            await runCleanroom();
        }
    }
    const cleanroomTps = median(cleanroomRuns);
    const plainTps = median(plainRuns);

    // Plain node-llama-cpp at each thread count, to show what the thread choice is worth.
    const plainByThreads: Record<string, number> = {};
    for (const threads of [1, 2, 4]) {
        const runs: number[] = [];
        // More threads than cores can be hundreds of times slower: each run is capped at 3 s.
        for (let run = 0; run < 3; run++)
            runs.push((await plainTokensPerSecond(plainModel, prepared.tokens, threads, 128, 3000)).tokensPerSecond);
        plainByThreads[threads] = round(median(runs), 1);
    }

    // 2. Scrub cost per MiB of KV.
    const scrubs: Array<{kvCells: number, kvBytes: number, ms: number}> = [];
    for (let run = 0; run < 5; run++) {
        const conversation = core.createConversation();
        await core.sendMessage({conversationId: conversation.id, text: prompt, maxTokens: 32, temperature: 0});
        const report = (await core.closeConversation(conversation.id))!;
        scrubs.push({kvCells: report.kvCells, kvBytes: report.bytesChecked, ms: report.durationMs});
    }
    const scrubMsPerMiB = median(scrubs.map((scrub) => scrub.ms / (scrub.kvBytes / 2 ** 20)));

    // 3. Resuming an evicted conversation with a ~1,000-token history: a fresh context rebuilt from SQLite.
    const resumed = core.createConversation({settings: {historyPolicy: "refuse"}});
    const filler = "The girl and her dog walked to the park and played with a red ball under the big tree. ";
    while (core.engine.preparePrompt({settings: resumed.settings, history: core.store.messages(resumed.id).map((m) => ({role: m.role, content: m.content})), userText: "x", maxTokens: 1}).tokens.length < 1000) {
        core.store.appendMessage(resumed.id, {role: "user", content: filler.repeat(2), status: "complete"});
        core.store.appendMessage(resumed.id, {role: "assistant", content: filler.repeat(2), status: "complete", route: "local"});
    }
    const resumeRuns: Array<{firstTokenMs: number, promptTokens: number}> = [];
    for (let run = 0; run < 3; run++) {
        await core.closeConversation(resumed.id, "evict");
        const result = await core.sendMessage({conversationId: resumed.id, text: "What happened then?", maxTokens: 1, temperature: 0});
        resumeRuns.push({firstTokenMs: result.timings.firstTokenMs ?? NaN, promptTokens: result.tokens.prompt});
        // Keep the history the same size for the next run.
        core.store.deleteMessage(result.assistantMessageId);
        core.store.deleteMessage(result.userMessageId);
    }

    // 4. Switching between two pooled conversations: the pool hands back the conversation's own live context.
    const left = core.createConversation();
    const right = core.createConversation();
    await core.sendMessage({conversationId: left.id, text: prompt, maxTokens: 8, temperature: 0});
    await core.sendMessage({conversationId: right.id, text: prompt, maxTokens: 8, temperature: 0});
    const switchMs: number[] = [];
    const switchTurnFirstTokenMs: number[] = [];
    for (let run = 0; run < 50; run++) {
        const target = run % 2 === 0 ? left : right;
        const started = performance.now();
        const {created} = await core.engine.pool!.open(target.id);
        switchMs.push(performance.now() - started);
        if (created)
            throw new Error("a pooled conversation was recreated");
    }
    for (let run = 0; run < 6; run++) {
        const target = run % 2 === 0 ? left : right;
        const result = await core.sendMessage({conversationId: target.id, text: "And then?", maxTokens: 1, temperature: 0});
        switchTurnFirstTokenMs.push(result.timings.firstTokenMs ?? NaN);
    }

    const info = core.engine.info!;
    await core.close();
    fs.rmSync(dir, {recursive: true, force: true});

    // 5. Raw llama.cpp, when a build of the same source is at hand.
    const llamaBench = findLlamaBench();
    const raw = llamaBench == null ? null : {
        threads1: rawGenerationTokensPerSecond(llamaBench, options.model, 1, 128),
        threads2: rawGenerationTokensPerSecond(llamaBench, options.model, 2, 128)
    };

    // 6. The canary scanner's cost.
    const scanner = benchScanner();

    const report = {
        machine: {cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? null, totalMemoryBytes: os.totalmem(), node: process.version},
        model: {path: options.model, fileBytes: info.fileBytes, parameters: info.parameters, contextSize: info.contextSize},
        threads: {tuned: tunedThreads, measurements: measurements.map((m) => ({threads: m.threads, tokensPerSecond: round(m.tokensPerSecond, 1)}))},
        generation: {
            tokens: generatedTokens,
            runs: options.runs,
            cleanroomTokensPerSecond: round(cleanroomTps, 1),
            plainNodeLlamaCppTokensPerSecond: round(plainTps, 1),
            ratio: round(cleanroomTps / plainTps, 3),
            goalRatio: 0.97,
            plainNodeLlamaCppByThreads: plainByThreads,
            rawLlamaCpp: raw == null ? null : {threads1: raw.threads1 == null ? null : round(raw.threads1, 1), threads2: raw.threads2 == null ? null : round(raw.threads2, 1)},
            rawLlamaCppNote: raw == null ? "no llama-bench build found: run scripts/build-llama-cpp.sh (about 7 minutes on 2 cores)" : `llama-bench at ${llamaBench}`
        },
        timeToFirstTokenMs: round(median(firstTokenMs), 2),
        scrub: {kvCells: scrubs[0]!.kvCells, kvBytes: scrubs[0]!.kvBytes, medianMs: round(median(scrubs.map((s) => s.ms)), 2), msPerMiB: round(scrubMsPerMiB, 2)},
        resumeEvicted: {historyTokens: resumeRuns[0]!.promptTokens, firstTokenMs: round(median(resumeRuns.map((r) => r.firstTokenMs)), 2)},
        switchPooled: {
            medianMs: round(median(switchMs), 4), maxMs: round(Math.max(...switchMs), 4), goalMs: 5,
            nextTurnFirstTokenMs: round(median(switchTurnFirstTokenMs), 2)
        },
        scanner
    };

    if (options.out != null) {
        fs.mkdirSync(path.dirname(options.out), {recursive: true});
        fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
    }
    if (options.json === true) {
        process.stdout.write(JSON.stringify(report, null, 2) + "\n");
        return;
    }

    const rows: Array<[string, string]> = [
        ["model", `${path.basename(options.model)} (${report.model.parameters} parameters, context ${report.model.contextSize})`],
        ["threads (tuned)", `${tunedThreads}  [${report.threads.measurements.map((m) => `${m.threads}: ${m.tokensPerSecond} tok/s`).join(", ")}]`],
        ["generation, Cleanroom", `${report.generation.cleanroomTokensPerSecond} tok/s (median of ${options.runs}, ${generatedTokens} tokens)`],
        ["generation, plain node-llama-cpp", `${report.generation.plainNodeLlamaCppTokensPerSecond} tok/s (same model, threads, prompt)`],
        ["ratio (goal >= 0.97)", `${report.generation.ratio}`],
        ["plain node-llama-cpp by threads", Object.entries(plainByThreads).map(([t, v]) => `${t}: ${v}`).join(", ") + " tok/s"],
        ["raw llama.cpp (llama-bench)", raw == null ? report.generation.rawLlamaCppNote : `1 thread: ${report.generation.rawLlamaCpp!.threads1} tok/s, 2 threads: ${report.generation.rawLlamaCpp!.threads2} tok/s`],
        ["time to first token", `${report.timeToFirstTokenMs} ms (prompt ${prepared.tokens.length} tokens)`],
        ["scrub", `${report.scrub.medianMs} ms for ${report.scrub.kvCells} cells / ${round(report.scrub.kvBytes / 2 ** 20, 2)} MiB = ${report.scrub.msPerMiB} ms per MiB`],
        ["resume evicted (1,000-token history)", `${report.resumeEvicted.firstTokenMs} ms to first token (${report.resumeEvicted.historyTokens} prompt tokens)`],
        ...scanner.byChunk.map(({chunkChars, megabytesPerSecond, microsecondsPerChunk}): [string, string] => [
            `canary scanner, ${chunkChars}-char chunks`,
            `${megabytesPerSecond} MB/s, ${microsecondsPerChunk} µs added per chunk (${scanner.fingerprints} fingerprints, 1 MiB reply)`
        ]),
        ["switch pooled conversations (goal < 5 ms)", `${report.switchPooled.medianMs} ms median, ${report.switchPooled.maxMs} ms max; next turn's first token ${report.switchPooled.nextTurnFirstTokenMs} ms`]
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    for (const [name, value] of rows)
        log(`${name.padEnd(width)}  ${value}`);
    if (options.out != null)
        log(`\nJSON report: ${options.out}`);
}

await main();

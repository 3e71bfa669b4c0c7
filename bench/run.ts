import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import {Command} from "commander";
import {Core} from "../src/core/node/Core.js";
import {createCoreServices} from "../src/core/node/createCoreServices.js";
import {describeLlamaBuild} from "../src/core/node/engine/describeLlamaBuild.js";
import {llamaGpuChoice, loadLlama} from "../src/core/node/engine/loadLlama.js";
import {relaunchWithCoreThreadpool} from "../src/core/node/engine/relaunchWithCoreThreadpool.js";
import {startupThreadpoolSize} from "../src/core/node/engine/startupThreadpoolSize.js";
import {measureThreads, pickBestThreads} from "../src/core/node/engine/ThreadTuner.js";
import {plainRun} from "./plainNodeLlamaCpp.js";
import {loadAverage1m, median, round} from "./stats.js";
import {benchScanner} from "./scannerBench.js";
import {ensureSyntheticModel} from "./syntheticModel.js";
import {formatThreadMatrix, runThreadMatrix, type ThreadMatrixReport} from "./threadMatrix.js";
import {formatProcessTimes, measureProcessTimes, type ProcessTimesReport} from "./processTimes.js";
import {measureLatencyLimits} from "./latencyLimits.js";
import {formatDocuments, measureDocumentsInChild} from "./documentsBench.js";
import {benchCommand, figureContext, withLoad} from "./figureContext.js";

type Options = {
    model: string, json?: boolean, tokens: number, runs: number, out?: string,
    threadModels: string, threadCounts: string, threadRepeats: number, threads: boolean,
    gpu?: string, processRuns: number, processTimes: boolean
};

const program = new Command()
    .option("--model <gguf>", "model to measure", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--tokens <n>", "tokens generated per run", (value) => Number(value), 256)
    .option("--runs <n>", "interleaved runs per engine", (value) => Number(value), 12)
    .option("--out <file>", "also write the JSON report here", "bench-results/bench.json")
    .option("--json", "print the JSON report on stdout instead of the table")
    .option("--thread-models <list>", "models of the thread matrix, comma-separated: \"test\" (--model), \"synthetic-86m\" (written on first use) or paths", "test,synthetic-86m")
    .option("--thread-counts <list>", "thread counts of the thread matrix", "1,2,4")
    .option("--thread-repeats <n>", "processes per configuration, model and count, alternating", (value) => Number(value), 2)
    .option("--no-threads", "skip the thread matrix (minutes: one process per configuration)")
    .option("--gpu <backend>", "add a GPU configuration to the thread matrix: vulkan, cuda or metal (slow on a software device: " +
        "the engine names Mesa's llvmpipe itself when it is the only Vulkan device); default: the GPU auto finds usable, if any")
    .option("--process-runs <n>", "whole-process runs of --help and of one turn, per command (median)", (value) => Number(value), 5)
    .option("--no-process-times", "skip the whole-process times (--help, one turn against a plain node-llama-cpp script)");
program.parse();
const options = program.opts<Options>();
const log = (line: string) => (options.json === true ? process.stderr : process.stdout).write(line + "\n");

// Measure Cleanroom as its entries run it: with the core's thread pool (see coreProcessEnv).
await relaunchWithCoreThreadpool();
const llama = await loadLlama();
const prompt = "Once upon a time, in a small house near the woods, there lived a girl who loved";

async function main() {
    const loadAtStart = loadAverage1m();
    const model = await llama.loadModel({modelPath: options.model});
    const measurements = await measureThreads(model);
    const tunedThreads = pickBestThreads(measurements);
    await model.dispose();

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-"));
    const services = createCoreServices(llama, {database: path.join(dir, "bench.db"), engine: {threads: tunedThreads, contextSize: 2048, pool: {idleTimeoutMs: 0}}});
    // The bench builds long histories and compares with plain node-llama-cpp on the same model, so it keeps the services.
    const {engine, store} = services;
    const core = new Core(services);
    await core.loadModel(options.model);
    const plainModel = engine.model!;
    const settings = core.createConversation().settings;
    const prepared = engine.preparePrompt({settings: {...settings, sampling: {...settings.sampling, maxTokens: options.tokens}}, history: [], userText: prompt});

    // 1. Generation speed, side by side, interleaved so that machine noise hits both alike.
    const cleanroomRuns: number[] = [];
    const plainRuns: number[] = [];
    const firstTokenMs: number[] = [];
    let generatedTokens = 0;
    await plainRun(plainModel, prepared.tokens, tunedThreads, 16); // warm-up
    const runCleanroom = async () => {
        const conversation = core.createConversation();
        const result = await core.sendMessage({conversationId: conversation.id, text: prompt, maxTokens: options.tokens, temperature: 0, route: "local"});
        await core.closeConversation(conversation.id);
        cleanroomRuns.push(result.timings.tokensPerSecond ?? 0);
        firstTokenMs.push(result.timings.firstTokenMs ?? NaN);
        generatedTokens = result.tokens.generated;
    };
    const runPlain = async () => {
        plainRuns.push((await plainRun(plainModel, prepared.tokens, tunedThreads, generatedTokens || options.tokens)).tokensPerSecond);
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
    // Beside each figure: the load average right after it was measured, and the command that measures it again.
    const coreCommand = benchCommand({model: options.model, tokens: options.tokens, runs: options.runs, threads: false, "process-times": false});
    const generationContext = figureContext(coreCommand);

    // 2. Scrub cost per MiB of KV.
    const scrubs: Array<{kvCells: number, kvBytes: number, ms: number}> = [];
    for (let run = 0; run < 5; run++) {
        const conversation = core.createConversation();
        await core.sendMessage({conversationId: conversation.id, text: prompt, maxTokens: 32, temperature: 0});
        const report = (await core.closeConversation(conversation.id))!;
        scrubs.push({kvCells: report.kvCells, kvBytes: report.bytesChecked, ms: report.durationMs});
    }
    const scrubMsPerMiB = median(scrubs.map((scrub) => scrub.ms / (scrub.kvBytes / 2 ** 20)));
    const scrubContext = figureContext(coreCommand);

    // 3. Resuming an evicted conversation with a ~1,000-token history: a fresh context rebuilt from SQLite.
    const resumed = core.createConversation({settings: {historyPolicy: "refuse"}});
    const filler = "The girl and her dog walked to the park and played with a red ball under the big tree. ";
    while (engine.preparePrompt({settings: resumed.settings, history: store.messages(resumed.id).map((m) => ({role: m.role, content: m.content})), userText: "x", maxTokens: 1}).tokens.length < 1000) {
        store.appendMessage(resumed.id, {role: "user", content: filler.repeat(2), status: "complete"});
        store.appendMessage(resumed.id, {role: "assistant", content: filler.repeat(2), status: "complete", route: "local"});
    }
    const resumeRuns: Array<{firstTokenMs: number, promptTokens: number}> = [];
    for (let run = 0; run < 3; run++) {
        await core.closeConversation(resumed.id, "evict");
        const result = await core.sendMessage({conversationId: resumed.id, text: "What happened then?", maxTokens: 1, temperature: 0, route: "local"});
        resumeRuns.push({firstTokenMs: result.timings.firstTokenMs ?? NaN, promptTokens: result.tokens.prompt});
        // Keep the history the same size for the next run.
        store.deleteMessage(result.assistantMessageId);
        store.deleteMessage(result.userMessageId);
    }

    const resumeContext = figureContext(coreCommand);

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
        const {created} = await engine.pool!.open(target.id);
        switchMs.push(performance.now() - started);
        if (created)
            throw new Error("a pooled conversation was recreated");
    }
    for (let run = 0; run < 6; run++) {
        const target = run % 2 === 0 ? left : right;
        const result = await core.sendMessage({conversationId: target.id, text: "And then?", maxTokens: 1, temperature: 0, route: "local"});
        switchTurnFirstTokenMs.push(result.timings.firstTokenMs ?? NaN);
    }

    const switchContext = figureContext(coreCommand);
    const info = engine.info!;
    await core.dispose();
    fs.rmSync(dir, {recursive: true, force: true});

    // 5. The canary scanner's cost.
    const scanner = {...benchScanner(), ...figureContext(coreCommand)};

    // 6. Threads: plain node-llama-cpp, Cleanroom and llama-bench at each count, before and after the fix (and on a GPU with --gpu).
    const threadCounts = options.threadCounts.split(",").map(Number);
    const matrixModels = options.threadModels.split(",").map((name) => name === "test"
        ? {name: path.basename(options.model, ".gguf"), path: options.model}
        : name === "synthetic-86m" ? {name, path: ensureSyntheticModel(options.model)} : {name: path.basename(name, ".gguf"), path: name});
    const threadMatrix: ThreadMatrixReport | null = options.threads ? await runThreadMatrix({
        models: matrixModels, threads: threadCounts, repeats: options.threadRepeats, tokens: 64, prefillTokens: 1000, maxMs: 3000,
        // The GPU configuration: --gpu, else the backend `auto` found usable here (none: CPU only).
        localBuild: describeLlamaBuild(llama).startsWith("local"), gpu: options.gpu ?? (await llamaGpuChoice(llama)).backend, log
    }) : null;

    // 7. Whole processes: `cleanroom --help`, and one turn against a plain node-llama-cpp script doing the same turn.
    const processTimes: ProcessTimesReport | null = options.processTimes ? await measureProcessTimes({
        models: matrixModels, runs: options.processRuns, prompt, maxTokens: 200, threads: tunedThreads, contextSize: 2048, log
    }) : null;

    // 8. Latencies the tests no longer assert on the clock, each against its goal.
    const latencyLimits = (await measureLatencyLimits()).map((limit) => ({...limit, ...figureContext(coreCommand)}));

    // 9. Documents: extraction, indexing, retrieval at 10,000 chunks; in a process of its own, so that its peak memory is theirs.
    const documents = await measureDocumentsInChild();

    const report = {
        machine: {cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? null, totalMemoryBytes: os.totalmem(), node: process.version,
            loadAverage1m: {atStart: loadAtStart, atEnd: loadAverage1m()}},
        model: {path: options.model, fileBytes: info.fileBytes, parameters: info.parameters, contextSize: info.contextSize},
        llamaBuild: describeLlamaBuild(llama),
        uvThreadpoolSize: startupThreadpoolSize(),
        threads: {tuned: tunedThreads, measurements: measurements.map((m) => ({threads: m.threads, tokensPerSecond: round(m.tokensPerSecond, 1), stopped: m.stopped}))},
        generation: {
            tokens: generatedTokens,
            runs: options.runs,
            cleanroomTokensPerSecond: round(cleanroomTps, 1),
            plainNodeLlamaCppTokensPerSecond: round(plainTps, 1),
            ratio: round(cleanroomTps / plainTps, 3),
            goalRatio: 0.97,
            ...generationContext
        },
        timeToFirstTokenMs: round(median(firstTokenMs), 2),
        /** `timeToFirstTokenMs` was measured in the generation runs. */
        timeToFirstTokenContext: generationContext,
        scrub: {kvCells: scrubs[0]!.kvCells, kvBytes: scrubs[0]!.kvBytes, medianMs: round(median(scrubs.map((s) => s.ms)), 2), msPerMiB: round(scrubMsPerMiB, 2), ...scrubContext},
        resumeEvicted: {historyTokens: resumeRuns[0]!.promptTokens, firstTokenMs: round(median(resumeRuns.map((r) => r.firstTokenMs)), 2), ...resumeContext},
        switchPooled: {
            medianMs: round(median(switchMs), 4), maxMs: round(Math.max(...switchMs), 4), goalMs: 5,
            nextTurnFirstTokenMs: round(median(switchTurnFirstTokenMs), 2), ...switchContext
        },
        scanner,
        threadMatrix: threadMatrix == null ? null : {...threadMatrix, command: benchCommand({model: options.model, "thread-models": options.threadModels,
            "thread-counts": options.threadCounts, "thread-repeats": options.threadRepeats, ...options.gpu != null ? {gpu: options.gpu} : {}, runs: 1, "process-times": false})},
        threadGoals: threadMatrix == null ? null : threadGoals(threadMatrix),
        processTimes: processTimes == null ? null : {...processTimes, command: benchCommand({model: options.model, "thread-models": options.threadModels,
            "process-runs": options.processRuns, runs: 1, threads: false})},
        latencyLimits,
        documents
    };

    if (options.out != null) {
        fs.mkdirSync(path.dirname(options.out), {recursive: true});
        fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
    }
    if (options.json === true) {
        process.stdout.write(JSON.stringify(report, null, 2) + "\n");
        return;
    }

    const rows: Array<[string, string]> = ([
        ["model", `${path.basename(options.model)} (${report.model.parameters} parameters, context ${report.model.contextSize})`],
        ["llama.cpp build, libuv pool", `${report.llamaBuild}, ${report.uvThreadpoolSize} thread(s)`],
        ["threads (tuned)", `${tunedThreads}  [${report.threads.measurements.map((m) => `${m.threads}: ${m.tokensPerSecond} tok/s${m.stopped === "slower" ? " (cut short)" : ""}`).join(", ")}]`],
        ["generation, Cleanroom", `${report.generation.cleanroomTokensPerSecond} tok/s (median of ${options.runs}, ${generatedTokens} tokens)`],
        ["generation, plain node-llama-cpp", `${report.generation.plainNodeLlamaCppTokensPerSecond} tok/s (same model, threads, prompt)`],
        ["ratio (goal >= 0.97)", `${report.generation.ratio}`],
        ["time to first token", `${report.timeToFirstTokenMs} ms (prompt ${prepared.tokens.length} tokens)`],
        ["scrub", `${report.scrub.medianMs} ms for ${report.scrub.kvCells} cells / ${round(report.scrub.kvBytes / 2 ** 20, 2)} MiB = ${report.scrub.msPerMiB} ms per MiB`],
        ["resume evicted (1,000-token history)", `${report.resumeEvicted.firstTokenMs} ms to first token (${report.resumeEvicted.historyTokens} prompt tokens)`],
        ...scanner.byChunk.map(({chunkChars, megabytesPerSecond, microsecondsPerChunk}): [string, string] => [
            `canary scanner, ${chunkChars}-char chunks`,
            `${megabytesPerSecond} MB/s, ${microsecondsPerChunk} µs added per chunk (${scanner.fingerprints} fingerprints, 1 MiB reply)`
        ]),
        ["switch pooled conversations (goal < 5 ms)", `${report.switchPooled.medianMs} ms median, ${report.switchPooled.maxMs} ms max; next turn's first token ${report.switchPooled.nextTurnFirstTokenMs} ms`],
        ...latencyLimits.map(({what, medianMs, maxMs, goalMs, met}): [string, string] =>
            [`${what} (goal < ${goalMs} ms)`, `${medianMs} ms median, ${maxMs} ms max${met ? "" : ": OVER THE GOAL"}`])
    ] satisfies Array<[string, string]>).map(([name, value]) => [name, withLoad(value, loadOfRow(name))]);
    function loadOfRow(name: string) {
        const byRow: Array<[string, {loadAverage1m: number}]> = [["generation", generationContext], ["ratio", generationContext], ["time to first token", generationContext],
            ["scrub", scrubContext], ["resume", resumeContext], ["switch", switchContext], ["canary", scanner], ["model", {loadAverage1m: loadAtStart}],
            ["llama.cpp", {loadAverage1m: loadAtStart}], ["threads", {loadAverage1m: loadAtStart}]];
        return byRow.find(([prefix]) => name.startsWith(prefix))?.[1] ?? latencyLimits.find((limit) => name.startsWith(limit.what)) ?? {loadAverage1m: loadAverage1m()};
    }
    const width = Math.max(...rows.map(([name]) => name.length));
    for (const [name, value] of rows)
        log(`${name.padEnd(width)}  ${value}`);
    if (threadMatrix != null) {
        for (const line of formatThreadMatrix(threadMatrix, threadCounts))
            log(line);
        for (const goal of report.threadGoals!)
            log(`goal ${goal.what}: ${goal.ratio} (Cleanroom ${goal.cleanroom} at ${goal.cleanroomThreads} threads, ${goal.configuration}, ${goal.llamaBuild ?? "build unknown"}; llama-bench ${goal.raw} at ${goal.rawThreads})`);
    }
    if (processTimes != null)
        for (const line of formatProcessTimes(processTimes, options.processRuns))
            log(line);
    for (const line of formatDocuments(documents))
        log(line);
    if (options.out != null)
        log(`\nJSON report: ${options.out}`);
}

/**
 * Cleanroom as it now runs (best "now" configuration and thread count) against llama-bench at its best count: goal >= 0.95,
 * one line per binary the "now" configurations ran on (node-llama-cpp's prebuilt one, the one `cleanroom engine build` made here).
 */
function threadGoals(matrix: ThreadMatrixReport) {
    const goals = [];
    const nowConfigurations = matrix.configurations.filter((candidate) => candidate.label.startsWith("now"));
    const binaryOf = (configuration: ThreadMatrixReport["configurations"][number]) => configuration.llamaBuild?.startsWith("local") === true ? "built here" : "prebuilt";
    for (const [name, model] of Object.entries(matrix.models)) {
        if (model.rawLlamaCpp == null)
            continue;
        for (const kind of ["generation", "prefill"] as const) {
            const [rawThreads, raw] = Object.entries(model.rawLlamaCpp).reduce<[string, number]>(
                (best, [threads, figures]) => ((figures[kind] ?? 0) > best[1] ? [threads, figures[kind]!] : best), ["-", 0]);
            for (const binary of [...new Set(nowConfigurations.map(binaryOf))]) {
                let best = {cleanroom: 0, cleanroomThreads: "-", configuration: "-", llamaBuild: null as string | null};
                for (const configuration of nowConfigurations.filter((candidate) => binaryOf(candidate) === binary))
                    for (const [threads, cell] of Object.entries(model.byConfiguration[configuration.id] ?? {}))
                        if (cell.cleanroom[kind] > best.cleanroom)
                            best = {cleanroom: cell.cleanroom[kind], cleanroomThreads: threads, configuration: configuration.label, llamaBuild: configuration.llamaBuild};
                if (best.cleanroom > 0)
                    goals.push({what: `${name} ${kind} on the ${binary} binary vs raw llama.cpp (>= 0.95)`, binary, ratio: raw > 0 ? round(best.cleanroom / raw, 3) : null, raw, rawThreads, ...best});
            }
        }
    }
    return goals;
}

await main();

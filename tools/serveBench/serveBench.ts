import {spawn, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import {Command} from "commander";
import {readGgufFileInfo} from "node-llama-cpp";
import * as z from "zod";
import {cliCommand} from "../../src/cli/cliCommand.js";
import {numberOption, textOption} from "../../src/cli/optionParsers.js";
import {benchEndpoint, type BenchApi, type EndpointBenchResult} from "./benchEndpoint.js";

/**
 * `cpuUsPerToken`: the server process's CPU time (all its threads) per completion token;
 * `mainThreadCpuUsPerToken`: its main thread's share (cleanroom serve's JavaScript; llama-server's decoding loop).
 */
type BenchLevel = EndpointBenchResult & {cpuUsPerToken: number | null, mainThreadCpuUsPerToken: number | null};
import {measureScrubOffPath} from "./scrubOffPath.js";
import {freePort} from "../freePort.js";

/**
 * `npm run bench:serve`: aggregate tokens per second and time to first token of `cleanroom serve`
 * (a context per request, scrubbed at its end) against llama-server (one shared batch, prompt
 * cache) on the same model and threads, at 1, 4 and 8 concurrent clients, and whether the
 * per-request scrub is off the next request's critical path. JSON report.
 */

type Options = {model: string, api: BenchApi, threads?: number, concurrency: string, requestsPerClient: number, maxTokens: number, warmupRequests: number, out: string, llamaServer?: string};

const program = new Command()
    .option("--model <gguf>", "model to serve", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--api <chat|completions>", "endpoint both servers stream from: chat (/v1/chat/completions) or completions (/v1/completions, no chat template or chat output parser)",
        textOption("--api", z.enum(["chat", "completions"])), "chat")
    .option("--threads <n>", "threads for both servers (default: cleanroom serve's own choice, llama-server's -t at the number of cores)",
        numberOption("--threads", z.number().int().min(1).max(256)))
    .option("--concurrency <list>", "concurrent clients, comma-separated", "1,4,8")
    .option("--requests-per-client <n>", "requests each client sends in turn", numberOption("--requests-per-client", z.number().int().min(1).max(1000)), 4)
    .option("--max-tokens <n>", "reply tokens per request", numberOption("--max-tokens", z.number().int().min(1).max(4096)), 64)
    .option("--warmup-requests <n>", "requests each server answers first, one after another, not measured", numberOption("--warmup-requests", z.number().int().min(1).max(1000)), 16)
    .option("--llama-server <path>", "llama-server binary (default: $CLEANROOM_LLAMA_SERVER, else the one scripts/build-llama.ts builds)")
    .option("--out <file>", "also write the JSON report here", "bench-results/serve-bench.json");
program.parse();
const options = program.opts<Options>();

const levels = options.concurrency.split(",").map((level) => Number(level.trim()));
if (levels.some((level) => !Number.isInteger(level) || level < 1 || level > 64))
    throw new Error(`--concurrency ${options.concurrency}: give whole numbers from 1 to 64, comma-separated.`);
const binary = options.llamaServer ?? process.env.CLEANROOM_LLAMA_SERVER ??
    path.join(process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp"), "build", "bin", "llama-server");
if (!fs.existsSync(binary))
    throw new Error(`llama-server is not at ${binary}: build it with npm run build:llama, or pass --llama-server.`);
const parallel = Math.max(...levels);
/** The warm-up's first client (`promptOf`): above any measured one. */
const warmupFirstClient = 1000;
if (levels.reduce((sum, level) => sum + level, 0) > warmupFirstClient)
    throw new Error(`--concurrency: at most ${warmupFirstClient} clients over all levels`);
/** llama-server's -t: the threads its one batched decode of all slots runs on; as many as serve's decodes may take in all, unless --threads says. */
const llamaServerThreads = options.threads ?? os.availableParallelism();
const modelName = path.basename(options.model).replace(/\.gguf$/i, "");

const children: ChildProcess[] = [];
/** The CLEANROOM_HOME folders of the serve processes started, removed once they have exited. */
const homes: string[] = [];
const stopAll = () => {
    for (const child of children)
        if (child.exitCode == null && child.signalCode == null)
            child.kill("SIGTERM");
};
process.on("exit", stopAll);
/** Stops the servers, waits for them to exit (serve scrubs and closes its database on the way out), then removes their homes. */
async function stopAndClean() {
    stopAll();
    await Promise.all(children.map((child) => child.exitCode != null || child.signalCode != null ? null
        : new Promise((resolve) => child.once("exit", resolve))));
    for (const home of homes.splice(0))
        fs.rmSync(home, {recursive: true, force: true});
}

const loadAtStart = os.loadavg().map((load) => Math.round(load * 100) / 100);
try {
    const {url: cleanroomUrl, scrubbed, pid: cleanroomPid, threading: cleanroomThreading} = await startCleanroomServe();
    const contextSize = await contextLengthOf(cleanroomUrl);
    const {url: llamaUrl, pid: llamaPid} = await startLlamaServer(contextSize);
    const cleanroom: BenchLevel[] = [];
    const llamaServer: BenchLevel[] = [];
    // llama-server parses every reply, streamed or not, with its chat output parser, which refuses text that is not valid
    // UTF-8 (HTTP 500 "does not match the expected Content-only format"): a byte-fallback token alone, as the 86M synthetic
    // model's random weights pick, makes such text. So it is asked never to pick one; serve streams such text as it is.
    const llamaServerBody = {logit_bias: (await byteTokensOf(options.model)).map((token) => [token, false])};
    const bodyFor = (baseURL: string) => baseURL === llamaUrl ? llamaServerBody : undefined;
    const run = (baseURL: string, concurrency: number, requestsPerClient = options.requestsPerClient, firstClient = 0) =>
        benchEndpoint({baseURL, model: modelName, api: options.api, concurrency, requestsPerClient, maxTokens: options.maxTokens, extraBody: bodyFor(baseURL), firstClient});
    /** A measured run, with the CPU time the server's process took per completion token (all its threads): less moved by the machine's load than the wall time. */
    const measured = async (baseURL: string, pid: number | undefined, concurrency: number, firstClient: number): Promise<BenchLevel> => {
        const processStat = pid == null ? null : `/proc/${pid}/stat`;
        const mainThreadStat = pid == null ? null : `/proc/${pid}/task/${pid}/stat`;
        const cpuBefore = cpuMsOf(processStat);
        const mainThreadBefore = cpuMsOf(mainThreadStat);
        const result = await run(baseURL, concurrency, options.requestsPerClient, firstClient);
        const perToken = (before: number | null, after: number | null) => before == null || after == null || result.completionTokens === 0 ? null
            : Math.round((after - before) * 1000 / result.completionTokens);
        return {...result, cpuUsPerToken: perToken(cpuBefore, cpuMsOf(processStat)), mainThreadCpuUsPerToken: perToken(mainThreadBefore, cpuMsOf(mainThreadStat))};
    };
    // Warm-up, not measured, the same for both: cleanroom serve's JavaScript runs at its steady speed only once V8 has
    // optimised its per-token path, which takes some thousand tokens; llama-server is compiled ahead and gains nothing.
    // Its prompts are the warm-up's own (clients from 1000 on; the measured levels take theirs from 0 on, each after the one before, the scrub's 2000 on): a measured
    // prompt sent in the warm-up would come back from llama-server's prompt cache (as it did before 2026-12-06: 1 client's
    // prompts were the warm-up's first two, and llama-server's first token came in 54 ms where a fresh prompt takes 200).
    await run(cleanroomUrl, 1, options.warmupRequests, warmupFirstClient);
    await run(llamaUrl, 1, options.warmupRequests, warmupFirstClient);
    for (const [index, concurrency] of levels.entries()) {
        // Each level's clients are its own (the levels before took the first ones), so that no level repeats another's prompts.
        const firstClient = levels.slice(0, index).reduce((sum, level) => sum + level, 0);
        cleanroom.push(await measured(cleanroomUrl, cleanroomPid, concurrency, firstClient));
        llamaServer.push(await measured(llamaUrl, llamaPid, concurrency, firstClient));
        process.stderr.write(`${concurrency} client(s): cleanroom ${cleanroom.at(-1)!.aggregateTokensPerSecond} tok/s (${cleanroom.at(-1)!.cpuUsPerToken} µs CPU/token, main thread ${cleanroom.at(-1)!.mainThreadCpuUsPerToken}), ` +
            `llama-server ${llamaServer.at(-1)!.aggregateTokensPerSecond} tok/s (${llamaServer.at(-1)!.cpuUsPerToken} µs CPU/token, main thread ${llamaServer.at(-1)!.mainThreadCpuUsPerToken})\n`);
    }
    // One client, one request after another: the next one's first token with the previous context's scrub running, and without.
    const scrubOffPath = {
        cleanroom: await measureScrubOffPath({baseURL: cleanroomUrl, model: modelName, api: options.api, maxTokens: options.maxTokens, requests: options.requestsPerClient * 2, scrubbed}),
        llamaServer: await measureScrubOffPath({
            baseURL: llamaUrl, model: modelName, api: options.api, maxTokens: options.maxTokens, requests: options.requestsPerClient * 2, extraBody: llamaServerBody
        })
    };
    process.stderr.write(`next request's first token: cleanroom ${scrubOffPath.cleanroom.nextTtftScrubRunningMs.median} ms with the previous scrub running, ` +
        `${scrubOffPath.cleanroom.nextTtftScrubDoneMs!.median} ms after it (the scrub's cost to the next request: ${scrubOffPath.cleanroom.scrubCostToNextTtftMs} ms); ` +
        `llama-server ${scrubOffPath.llamaServer.nextTtftScrubRunningMs.median} ms\n`);
    const report = {
        loadAverage: {atStart: loadAtStart, atEnd: os.loadavg().map((load) => Math.round(load * 100) / 100)},
        model: options.model, api: options.api, cpus: os.availableParallelism(), contextPerRequest: contextSize,
        // serve's own line on its threads (libuv pool, threads per context, the cap on all at once), and llama-server's -t.
        threads: {cleanroom: cleanroomThreading, llamaServer: llamaServerThreads},
        llamaServerForbiddenByteTokens: llamaServerBody.logit_bias.length,
        maxTokens: options.maxTokens, requestsPerClient: options.requestsPerClient, warmupRequests: options.warmupRequests,
        cleanroom, llamaServer,
        comparison: levels.map((concurrency, index) => ({
            concurrency,
            throughputRatio: Math.round(cleanroom[index]!.aggregateTokensPerSecond / llamaServer[index]!.aggregateTokensPerSecond * 1000) / 1000,
            cpuUsPerToken: {cleanroom: cleanroom[index]!.cpuUsPerToken, llamaServer: llamaServer[index]!.cpuUsPerToken},
            mainThreadCpuUsPerToken: {cleanroom: cleanroom[index]!.mainThreadCpuUsPerToken, llamaServer: llamaServer[index]!.mainThreadCpuUsPerToken},
            ttftMedianMs: {cleanroom: cleanroom[index]!.ttftMs.median, llamaServer: llamaServer[index]!.ttftMs.median}
        })),
        scrubOffPath
    };
    fs.mkdirSync(path.dirname(path.resolve(options.out)), {recursive: true});
    fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
} finally {
    await stopAndClean();
}

/** Starts `cleanroom serve`; `scrubbed(responseId)` resolves once its log reported that request's context scrubbed, with when (`performance.now()`). */
async function startCleanroomServe(): Promise<{url: string, scrubbed: (responseId: string) => Promise<number>, pid: number | undefined, threading: string}> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-serve-bench-"));
    homes.push(home);
    const {command, args} = cliCommand(["serve", "--port", "0", "--model", options.model, ...options.threads != null ? ["--threads", String(options.threads)] : [],
        "--parallel", String(parallel), "--db", path.join(home, "bench.db")]);
    // Serve as a user starts it (the launcher gives it the core's pool of 1); a UV_THREADPOOL_SIZE given to the bench reaches it.
    const child = spawn(command, args, {env: {...process.env, CLEANROOM_HOME: home}, stdio: ["ignore", "pipe", "pipe"]});
    children.push(child);
    const scrubbedAt = new Map<string, number>();
    const waiting = new Map<string, (at: number) => void>();
    const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`cleanroom serve exited with ${code} before serving`))));
    let toldThreading: (line: string) => void = () => undefined;
    const threading = new Promise<string>((resolve) => (toldThreading = resolve));
    readline.createInterface({input: child.stderr!}).on("line", (line) => {
        process.stderr.write(line + "\n");
        if (line.startsWith("Threads: "))
            toldThreading(line.slice("Threads: ".length));
        const requestId = /^api-([0-9a-f]+) \(.*\): .* scrubbed, verified/.exec(line)?.[1];
        if (requestId == null)
            return;
        const at = performance.now();
        scrubbedAt.set(requestId, at);
        waiting.get(requestId)?.(at);
    });
    const scrubbed = (responseId: string) => new Promise<number>((resolve) => {
        const requestId = responseId.replace(/^(chat)?cmpl-/, "");
        const at = scrubbedAt.get(requestId);
        if (at != null)
            resolve(at);
        else
            waiting.set(requestId, resolve);
    });
    const url = new Promise<string>((resolve) => {
        let stdout = "";
        child.stdout!.on("data", (chunk: Buffer) => {
            stdout += chunk.toString("utf8");
            const line = /^(http:\/\/\S+\/v1)\n/.exec(stdout);
            if (line != null)
                resolve(line[1]!);
        });
    });
    // Serving once it has printed its URL (stdout) and its threads (stderr, the line after).
    const [servedAt, threads] = await Promise.race([Promise.all([url, threading]), exited]);
    return {url: servedAt, scrubbed, pid: child.pid, threading: threads};
}

async function startLlamaServer(contextPerSlot: number): Promise<{url: string, pid: number | undefined}> {
    const port = await freePort();
    const child = spawn(binary, ["-m", options.model, "--host", "127.0.0.1", "--port", String(port), "--parallel", String(parallel),
        "-c", String(contextPerSlot * parallel), "-t", String(llamaServerThreads), "--threads-http", String(parallel + 2), "--no-webui"], {stdio: "ignore"});
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 120_000;
    for (;;) {
        if (child.exitCode != null)
            throw new Error(`llama-server exited with ${child.exitCode}`);
        const healthy = await fetch(`${base}/health`).then((response) => response.status === 200, () => false);
        if (healthy)
            return {url: `${base}/v1`, pid: child.pid};
        if (Date.now() > deadline)
            throw new Error("llama-server did not become healthy in 2 minutes");
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

/**
 * CPU time (user and system) taken so far, in ms, from a /proc `stat` file: a process's (`/proc/<pid>/stat`, every
 * thread) or one thread's (`/proc/<pid>/task/<tid>/stat`); null where /proc cannot say (not Linux).
 */
function cpuMsOf(statFile: string | null): number | null {
    if (statFile == null)
        return null;
    try {
        // Fields 14 and 15 (utime, stime) after the command name, which is in parentheses and may hold spaces; in clock ticks (100 a second on Linux).
        const fields = fs.readFileSync(statFile, "utf8").split(") ")[1]!.split(" ");
        return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
        return null;
    }
}

/** The model's byte-fallback tokens (`<0x00>` … `<0xFF>`: GGUF token type 6), by id. */
async function byteTokensOf(modelPath: string): Promise<number[]> {
    const {metadata} = await readGgufFileInfo(modelPath, {readTensorInfo: false});
    const tokenTypes = z.object({tokenizer: z.object({ggml: z.object({token_type: z.array(z.number()).optional()})})}).parse(metadata).tokenizer.ggml.token_type ?? [];
    return tokenTypes.flatMap((type, token) => type === 6 ? [token] : []);
}

async function contextLengthOf(baseURL: string): Promise<number> {
    const models = z.object({data: z.array(z.object({context_length: z.number()}))}).parse(await (await fetch(`${baseURL}/models`)).json());
    return models.data[0]!.context_length;
}


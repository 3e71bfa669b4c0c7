import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {freshCliBundle} from "../bin/cliBundle.mjs";
import {ConversationSettingsSchema} from "../src/core/common/types.js";
import {describeLlamaBuild, type LlamaBuildFacts} from "../src/core/node/engine/describeLlamaBuild.js";
import {localLlamaBuildCmakeOptions} from "../src/core/node/engine/localLlamaBuild.js";
import {parseStartupTrace, startupTraceEnv, type StartupTrace} from "../src/core/node/startupTrace.js";
import {childrenCpuMs} from "./childrenCpuMs.js";
import {loadAverage1m, median, round} from "./stats.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const launcher = path.join(repoRoot, "bin", "cleanroom.cjs");
const plainTurnScript = path.join(repoRoot, "bench", "plainTurn.mjs");

export type ProcessTimesOptions = {
    /** Models the turn runs on, by name. */
    models: Array<{name: string, path: string}>,
    /** Whole-process runs per command (after one warm-up); the median is the figure. */
    runs: number,
    prompt: string,
    maxTokens: number,
    /** `--threads` of Cleanroom's turn. Defaults to none: the count it measured fastest (the warm-up run measures it). */
    threads?: number,
    /** `--context-size` of Cleanroom's turn. Defaults to none: its default. */
    contextSize?: number,
    /** Leaves out `--help` and the `--gpu auto` against `--gpu off` runs. */
    turnsOnly?: boolean,
    log: (line: string) => void
};

/**
 * `loadAverage1m`: the 1-minute load average once its runs were done (the machine may be shared).
 * `cpuMedianMs`: the median CPU time (user + system) of the process and the children it waited for,
 * which a busy machine moves far less than wall-clock time (Linux only, else absent).
 */
type Timing = {medianMs: number, runsMs: number[], cpuMedianMs?: number, cpuRunsMs?: number[], loadAverage1m?: number};
/** What the two turns ran on: the same llama.cpp build and context options, or the bench stops (`measureProcessTimes`). */
type TurnSetup = {llamaBuild: string, gpu: string, gpuLayers: number, threads: number, contextSize: number, promptTokens: number | null};
export type ProcessTimesReport = {
    /** Null with `turnsOnly`. */
    help: {compiled: Timing, source: Timing, goalMs: number} | null,
    turns: Record<string, {
        cleanroom: Timing, plainScript: Timing, ratio: number, goalRatio: number,
        /** The same ratio in CPU time (null where not measured). */
        cpuRatio: number | null,
        /** Tokens each generated in its last run: both stop at the budget or at the end of the reply. */
        generatedTokens: {cleanroom: number | null, plainScript: number | null},
        /** What each turn ran on, as each process reported it: checked equal in build, threads and context size. */
        setup: {cleanroom: TurnSetup, plainScript: TurnSetup},
        /** Median ms of each phase of Cleanroom's turn (CLEANROOM_TRACE_STARTUP), in the order they end. */
        cleanroomPhasesMs: Record<string, number>
    }>,
    /** One turn on the first model with `--gpu auto` (the default) against `--gpu off`: what looking for a GPU costs a process (after the first, which remembers the answer in CLEANROOM_HOME), and where auto ran. */
    gpuAuto: {auto: Timing, off: Timing, extraMs: number, autoRanOn: string | null} | null,
    commands: Record<string, string>
};

/**
 * Wall-clock time of whole processes, as a user starts them: `cleanroom --help` (the compiled CLI
 * with plain node, and the sources under tsx as before), and one `chat --prompt` turn against a
 * plain node-llama-cpp script doing the same completion (bench/plainTurn.mjs). The script is set
 * up from what Cleanroom's warm-up turn reported (its llama.cpp build, in CLEANROOM_TRACE_STARTUP's
 * trace; GPU layers, threads, context size in its JSON) and started with the libuv pool Cleanroom's
 * launcher gives itself, with Cleanroom's default system prompt; the bench stops when the two
 * report a different build, threads or context size. Alternating runs, each in a fresh
 * CLEANROOM_HOME, without UV_THREADPOOL_SIZE in the environment; the database is kept between
 * Cleanroom's runs, as a user's is (so its KV layout and thread count are cached after the warm-up run).
 */
export async function measureProcessTimes(options: ProcessTimesOptions): Promise<ProcessTimesReport> {
    await freshCliBundle();
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-process-"));
    const env = {...process.env, CLEANROOM_HOME: path.join(home, "app"), TMPDIR: home, UV_THREADPOOL_SIZE: undefined, CLEANROOM_MODEL: "", [startupTraceEnv]: "1"};
    let last = {stdout: "", stderr: ""};
    const time = (command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
        const cpuBefore = childrenCpuMs();
        const started = performance.now();
        const result = spawnSync(command, args, {env: {...env, ...extraEnv}, stdio: ["ignore", "pipe", "pipe"], timeout: 600_000, encoding: "utf8"});
        const ms = performance.now() - started;
        const cpuAfter = childrenCpuMs();
        if (result.status !== 0)
            throw new Error(`${path.basename(args[0] ?? command)} ${args.slice(1, 3).join(" ")} exited with ${result.status}: ${result.stderr.trim()}`);
        last = {stdout: result.stdout, stderr: result.stderr};
        return {ms, cpuMs: cpuBefore == null || cpuAfter == null ? null : cpuAfter - cpuBefore};
    };
    const timing = (runs: Array<{ms: number, cpuMs: number | null}>): Timing => {
        const cpuRunsMs = runs.every((run) => run.cpuMs != null) ? runs.map((run) => run.cpuMs!) : null;
        return {
            medianMs: round(median(runs.map((run) => run.ms)), 1), runsMs: runs.map((run) => round(run.ms, 1)),
            ...(cpuRunsMs != null ? {cpuMedianMs: round(median(cpuRunsMs), 1), cpuRunsMs} : {}),
            loadAverage1m: loadAverage1m()
        };
    };
    type Run = ReturnType<typeof time>;
    const alternate = (left: () => Run, right: () => Run) => {
        const lefts: Run[] = [];
        const rights: Run[] = [];
        left();
        right(); // warm-up: the file cache, the bundle, the cached KV layout
        for (let run = 0; run < options.runs; run++) {
            if (run % 2 === 0) {
                lefts.push(left());
                rights.push(right());
            } else {
                rights.push(right());
                lefts.push(left());
            }
        }
        return [timing(lefts), timing(rights)] as const;
    };

    try {
        const tsx = import.meta.resolve("tsx");
        const commands: Record<string, string> = {};
        let help: ProcessTimesReport["help"] = null;
        if (options.turnsOnly !== true) {
            commands.helpCompiled = "node bin/cleanroom.cjs --help";
            commands.helpSource = "node --import tsx src/cli/main.ts --help";
            options.log("  process times: --help");
            const [compiled, source] = alternate(
                () => time(process.execPath, [launcher, "--help"]),
                () => time(process.execPath, ["--import", tsx, path.join(repoRoot, "src", "cli", "main.ts"), "--help"])
            );
            help = {compiled, source, goalMs: 500};
        }

        const systemPrompt = ConversationSettingsSchema.parse({}).systemPrompt;
        const turns: ProcessTimesReport["turns"] = {};
        for (const model of options.models) {
            options.log(`  process times: one turn, ${model.name}`);
            const database = path.join(home, `${model.name}.db`);
            const chatArgs = ["chat", "--model", model.path, "--prompt", options.prompt, "--max-tokens", String(options.maxTokens), "--temperature", "0",
                ...(options.threads != null ? ["--threads", String(options.threads)] : []),
                ...(options.contextSize != null ? ["--context-size", String(options.contextSize)] : []),
                "--db", database, "--json"];
            let cleanroomSetup: (TurnSetup & {llamaGpu: string, localBuild: boolean}) | null = null;
            let plainSetup: TurnSetup | null = null;
            const phaseRuns: StartupTrace[] = [];
            const generated = {cleanroom: null as number | null, plainScript: null as number | null};
            const plainArgs = () => {
                const setup = cleanroomSetup!;
                return ["--model", model.path, "--prompt", options.prompt, "--system", systemPrompt, "--max-tokens", String(options.maxTokens),
                    "--threads", String(setup.threads), "--context-size", String(setup.contextSize), "--gpu", setup.llamaGpu, "--gpu-layers", String(setup.gpuLayers),
                    "--cmake-options", JSON.stringify(setup.localBuild ? localLlamaBuildCmakeOptions : {})];
            };
            const [cleanroom, plainScript] = alternate(
                () => {
                    const run = time(process.execPath, [launcher, ...chatArgs]);
                    const turn = JSON.parse(last.stdout) as {gpu: string | null, gpuLayers: number, tokens: {prompt: number, generated: number}, isolation: {threads: number, kvCells: number}};
                    const trace = parseStartupTrace(last.stderr);
                    const llamaBuild = trace?.facts.llamaBuild;
                    if (trace == null || typeof llamaBuild !== "string")
                        throw new Error(`Cleanroom's turn printed no startup trace with its llama.cpp build (${startupTraceEnv}=1): ${last.stderr.trim()}`);
                    phaseRuns.push(trace);
                    generated.cleanroom = turn.tokens.generated;
                    cleanroomSetup ??= {
                        llamaBuild, llamaGpu: String(trace.facts.llamaGpu), localBuild: llamaBuild.startsWith("local "), gpu: turn.gpu ?? "cpu", gpuLayers: turn.gpuLayers,
                        threads: turn.isolation.threads, contextSize: turn.isolation.kvCells, promptTokens: turn.tokens.prompt
                    };
                    return run;
                },
                () => {
                    const args = plainArgs();
                    // The libuv pool Cleanroom's launcher gives its own process (bin/cleanroom.cjs): one thread.
                    const run = time(process.execPath, [plainTurnScript, ...args], {UV_THREADPOOL_SIZE: "1"});
                    const turn = JSON.parse(last.stdout) as {tokens: number, promptTokens: number | null, gpuLayers: number, llamaBuild: LlamaBuildFacts};
                    generated.plainScript = turn.tokens;
                    if (plainSetup == null) {
                        plainSetup = {
                            llamaBuild: describeLlamaBuild(turn.llamaBuild), gpu: cleanroomSetup!.gpu, gpuLayers: turn.gpuLayers,
                            threads: Number(args[args.indexOf("--threads") + 1]), contextSize: Number(args[args.indexOf("--context-size") + 1]), promptTokens: turn.promptTokens
                        };
                        const mismatch = (["llamaBuild", "gpuLayers", "threads", "contextSize"] as const).filter((key) => plainSetup![key] !== cleanroomSetup![key]);
                        if (mismatch.length > 0)
                            throw new Error(`The plain script did not run as Cleanroom did (${mismatch.map((key) => `${key}: ${cleanroomSetup![key]} against ${plainSetup![key]}`).join(", ")}): ` +
                                "the ratio would compare builds or settings, not Cleanroom's own cost.");
                    }
                    return run;
                }
            );
            const {llamaGpu: _llamaGpu, localBuild: _localBuild, ...cleanroomReported} = cleanroomSetup!;
            turns[model.name] = {
                cleanroom, plainScript, generatedTokens: generated, ratio: round(cleanroom.medianMs / plainScript.medianMs, 3), goalRatio: 1.15,
                cpuRatio: cleanroom.cpuMedianMs != null && plainScript.cpuMedianMs != null ? round(cleanroom.cpuMedianMs / plainScript.cpuMedianMs, 3) : null,
                setup: {cleanroom: cleanroomReported, plainScript: plainSetup!},
                cleanroomPhasesMs: medianPhases(phaseRuns.slice(1)) // without the warm-up run's
            };
            const shown = (arg: string) => (arg === database ? "<app.db>" : /\s/.test(arg) ? JSON.stringify(arg) : arg);
            commands[`turn ${model.name}`] = `node bin/cleanroom.cjs ${chatArgs.map(shown).join(" ")}  vs  UV_THREADPOOL_SIZE=1 node bench/plainTurn.mjs ${plainArgs().map(shown).join(" ")}`;
        }
        // `--gpu auto` against `--gpu off`, one turn on the first model, each process in its own home.
        let gpuAuto: ProcessTimesReport["gpuAuto"] = null;
        const first = options.models[0];
        if (first != null && options.turnsOnly !== true) {
            options.log(`  process times: one turn, ${first.name}, --gpu auto against --gpu off`);
            const gpuArgs = (gpu: string) => ["chat", "--model", first.path, "--prompt", options.prompt, "--max-tokens", String(options.maxTokens), "--temperature", "0",
                ...(options.threads != null ? ["--threads", String(options.threads)] : []),
                ...(options.contextSize != null ? ["--context-size", String(options.contextSize)] : []),
                "--db", path.join(home, `gpu-${gpu}.db`), "--json", "--gpu", gpu];
            let autoRanOn: string | null = null;
            const [auto, off] = alternate(
                () => {
                    const run = time(process.execPath, [launcher, ...gpuArgs("auto")]);
                    const turn = JSON.parse(last.stdout || "{}") as {gpu?: string | null, gpuDevice?: string | null, gpuLayers?: number};
                    autoRanOn = turn.gpu == null ? "CPU" : `${turn.gpu} ${turn.gpuDevice ?? ""} (${turn.gpuLayers ?? 0} layers)`;
                    return run;
                },
                () => time(process.execPath, [launcher, ...gpuArgs("off")])
            );
            gpuAuto = {auto, off, extraMs: round(auto.medianMs - off.medianMs, 1), autoRanOn};
            commands.gpuAuto = `node bin/cleanroom.cjs ${gpuArgs("auto").map((arg) => (arg.endsWith("gpu-auto.db") ? "<app.db>" : /\s/.test(arg) ? JSON.stringify(arg) : arg)).join(" ")}  vs  the same with --gpu off`;
        }
        return {help, turns, gpuAuto, commands};
    } finally {
        fs.rmSync(home, {recursive: true, force: true});
    }
}

/** The median of each phase over the runs' traces, in the order the phases end. */
function medianPhases(traces: StartupTrace[]): Record<string, number> {
    const byPhase = new Map<string, number[]>();
    for (const trace of traces)
        for (const {phase, ms} of trace.phases)
            byPhase.set(phase, [...byPhase.get(phase) ?? [], ms]);
    return Object.fromEntries([...byPhase].map(([phase, runs]) => [phase, round(median(runs), 1)]));
}

/** The whole-process figures as `npm run bench` prints them. */
export function formatProcessTimes(times: ProcessTimesReport, runs: number) {
    const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const load = (timing: Timing) => (timing.loadAverage1m == null ? "" : `  [load ${timing.loadAverage1m.toFixed(2)}]`);
    const cpu = (timing: Timing) => (timing.cpuMedianMs == null ? "" : `, CPU ${seconds(timing.cpuMedianMs)}`);
    return [
        "", `whole processes, median of ${runs} alternating runs (after a warm-up)`,
        ...(times.help == null ? [] : [`  cleanroom --help (goal < ${seconds(times.help.goalMs)})  compiled ${seconds(times.help.compiled.medianMs)}; ` +
            `from source under tsx ${seconds(times.help.source.medianMs)}${load(times.help.source)}`]),
        ...Object.entries(times.turns).flatMap(([name, turn]) => [
            `  one turn, ${name}, up to 200 tokens (goal <= ${turn.goalRatio}x)  Cleanroom ${seconds(turn.cleanroom.medianMs)}${cpu(turn.cleanroom)} (${turn.generatedTokens.cleanroom} tokens), ` +
            `plain node-llama-cpp script ${seconds(turn.plainScript.medianMs)}${cpu(turn.plainScript)} (${turn.generatedTokens.plainScript} tokens): ` +
            `${turn.ratio}x${turn.cpuRatio == null ? "" : ` (CPU ${turn.cpuRatio}x)`}${load(turn.plainScript)}`,
            `    both ran ${turn.setup.cleanroom.llamaBuild} on ${turn.setup.cleanroom.gpu} (${turn.setup.cleanroom.gpuLayers} GPU layers), ${turn.setup.cleanroom.threads} thread(s), ` +
            `context ${turn.setup.cleanroom.contextSize}, prompt ${turn.setup.cleanroom.promptTokens} / ${turn.setup.plainScript.promptTokens} tokens`,
            `    Cleanroom's phases (median ms): ${Object.entries(turn.cleanroomPhasesMs).map(([phase, ms]) => `${phase} ${ms}`).join(", ")}`
        ]),
        ...(times.gpuAuto == null ? [] : [`  one turn, --gpu auto (ran on: ${times.gpuAuto.autoRanOn ?? "?"}) ${seconds(times.gpuAuto.auto.medianMs)} ` +
            `against --gpu off ${seconds(times.gpuAuto.off.medianMs)}: looking for a GPU adds ${seconds(times.gpuAuto.extraMs)} per process${load(times.gpuAuto.off)}`])
    ];
}

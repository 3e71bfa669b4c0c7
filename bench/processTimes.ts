import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {freshCliBundle} from "../bin/cliBundle.mjs";
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
    threads: number,
    contextSize: number,
    log: (line: string) => void
};

/** `loadAverage1m`: the 1-minute load average once its runs were done (the machine may be shared). */
type Timing = {medianMs: number, runsMs: number[], loadAverage1m?: number};
export type ProcessTimesReport = {
    help: {compiled: Timing, source: Timing, goalMs: number},
    turns: Record<string, {
        cleanroom: Timing, plainScript: Timing, ratio: number, goalRatio: number,
        /** Tokens each generated in its last run: both stop at the budget or at the end of the reply. */
        generatedTokens: {cleanroom: number | null, plainScript: number | null}
    }>,
    /** One turn on the first model with `--gpu auto` (the default) against `--gpu off`: what looking for a GPU costs a process (after the first, which remembers the answer in CLEANROOM_HOME), and where auto ran. */
    gpuAuto: {auto: Timing, off: Timing, extraMs: number, autoRanOn: string | null} | null,
    commands: Record<string, string>
};

/**
 * Wall-clock time of whole processes, as a user starts them: `cleanroom --help` (the compiled CLI
 * with plain node, and the sources under tsx as before), and one `chat --prompt` turn against a
 * plain node-llama-cpp script doing the same turn (bench/plainTurn.mjs: same model, prompt, reply
 * budget, threads and context size). Alternating runs, each in a fresh CLEANROOM_HOME, without
 * UV_THREADPOOL_SIZE in the environment; the database is kept between Cleanroom's runs, as a user's
 * is (so its KV layout is cached after the warm-up run).
 */
export async function measureProcessTimes(options: ProcessTimesOptions): Promise<ProcessTimesReport> {
    await freshCliBundle();
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-process-"));
    const env = {...process.env, CLEANROOM_HOME: path.join(home, "app"), TMPDIR: home, UV_THREADPOOL_SIZE: undefined, CLEANROOM_MODEL: ""};
    const outputs: string[] = [];
    const time = (command: string, args: string[]) => {
        const started = performance.now();
        const result = spawnSync(command, args, {env, stdio: ["ignore", "pipe", "pipe"], timeout: 600_000, encoding: "utf8"});
        const ms = performance.now() - started;
        if (result.status !== 0)
            throw new Error(`${path.basename(args[0] ?? command)} ${args.slice(1, 3).join(" ")} exited with ${result.status}: ${result.stderr.trim()}`);
        outputs.push(result.stdout);
        return ms;
    };
    /** Tokens the last run of each generated (the turns print JSON: Cleanroom's `tokens.generated`, the script's `tokens`). */
    const lastGenerated = (): number | null => {
        const parsed = JSON.parse(outputs.at(-1) ?? "null") as {tokens?: number | {generated?: number}} | null;
        return typeof parsed?.tokens === "number" ? parsed.tokens : parsed?.tokens?.generated ?? null;
    };
    const timing = (runsMs: number[]): Timing => ({medianMs: round(median(runsMs), 1), runsMs: runsMs.map((ms) => round(ms, 1)), loadAverage1m: loadAverage1m()});
    const alternate = (left: () => number, right: () => number) => {
        const lefts: number[] = [];
        const rights: number[] = [];
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
        const commands: Record<string, string> = {
            helpCompiled: "node bin/cleanroom.cjs --help",
            helpSource: "node --import tsx src/cli/main.ts --help"
        };
        options.log("  process times: --help");
        const [compiled, source] = alternate(
            () => time(process.execPath, [launcher, "--help"]),
            () => time(process.execPath, ["--import", tsx, path.join(repoRoot, "src", "cli", "main.ts"), "--help"])
        );

        const turns: ProcessTimesReport["turns"] = {};
        for (const model of options.models) {
            options.log(`  process times: one turn, ${model.name}`);
            const database = path.join(home, `${model.name}.db`);
            const common = [String(options.maxTokens), String(options.threads), String(options.contextSize)];
            const chatArgs = ["chat", "--model", model.path, "--prompt", options.prompt, "--max-tokens", common[0]!, "--temperature", "0",
                "--threads", common[1]!, "--context-size", common[2]!, "--db", database, "--json"];
            const generated = {cleanroom: null as number | null, plainScript: null as number | null};
            const [cleanroom, plainScript] = alternate(
                () => {
                    const ms = time(process.execPath, [launcher, ...chatArgs]);
                    generated.cleanroom = lastGenerated();
                    return ms;
                },
                () => {
                    const ms = time(process.execPath, [plainTurnScript, model.path, options.prompt, ...common]);
                    generated.plainScript = lastGenerated();
                    return ms;
                }
            );
            turns[model.name] = {cleanroom, plainScript, generatedTokens: generated, ratio: round(cleanroom.medianMs / plainScript.medianMs, 3), goalRatio: 1.15};
            commands[`turn ${model.name}`] = `node bin/cleanroom.cjs ${chatArgs.map((arg) => (arg === database ? "<app.db>" : /\s/.test(arg) ? JSON.stringify(arg) : arg)).join(" ")}` +
                `  vs  node bench/plainTurn.mjs ${model.path} ${JSON.stringify(options.prompt)} ${common.join(" ")}`;
        }
        // `--gpu auto` against `--gpu off`, one turn on the first model, each process in its own home.
        let gpuAuto: ProcessTimesReport["gpuAuto"] = null;
        const first = options.models[0];
        if (first != null) {
            options.log(`  process times: one turn, ${first.name}, --gpu auto against --gpu off`);
            const gpuArgs = (gpu: string) => ["chat", "--model", first.path, "--prompt", options.prompt, "--max-tokens", String(options.maxTokens), "--temperature", "0",
                "--threads", String(options.threads), "--context-size", String(options.contextSize), "--db", path.join(home, `gpu-${gpu}.db`), "--json", "--gpu", gpu];
            let autoRanOn: string | null = null;
            const [auto, off] = alternate(
                () => {
                    const ms = time(process.execPath, [launcher, ...gpuArgs("auto")]);
                    const turn = JSON.parse(outputs.at(-1) ?? "{}") as {gpu?: string | null, gpuDevice?: string | null, gpuLayers?: number};
                    autoRanOn = turn.gpu == null ? "CPU" : `${turn.gpu} ${turn.gpuDevice ?? ""} (${turn.gpuLayers ?? 0} layers)`;
                    return ms;
                },
                () => time(process.execPath, [launcher, ...gpuArgs("off")])
            );
            gpuAuto = {auto, off, extraMs: round(auto.medianMs - off.medianMs, 1), autoRanOn};
            commands.gpuAuto = `node bin/cleanroom.cjs chat --model ${first.path} --prompt ${JSON.stringify(options.prompt)} --max-tokens ${options.maxTokens} --temperature 0 ` +
                `--threads ${options.threads} --context-size ${options.contextSize} --db <app.db> --json --gpu auto  vs  the same with --gpu off`;
        }
        return {help: {compiled, source, goalMs: 500}, turns, gpuAuto, commands};
    } finally {
        fs.rmSync(home, {recursive: true, force: true});
    }
}

/** The whole-process figures as `npm run bench` prints them. */
export function formatProcessTimes(times: ProcessTimesReport, runs: number) {
    const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const load = (timing: Timing) => (timing.loadAverage1m == null ? "" : `  [load ${timing.loadAverage1m.toFixed(2)}]`);
    return [
        "", `whole processes, median of ${runs} alternating runs (after a warm-up)`,
        `  cleanroom --help (goal < ${seconds(times.help.goalMs)})  compiled ${seconds(times.help.compiled.medianMs)}; from source under tsx ${seconds(times.help.source.medianMs)}${load(times.help.source)}`,
        ...Object.entries(times.turns).map(([name, turn]) =>
            `  one turn, ${name}, up to 200 tokens (goal <= ${turn.goalRatio}x)  Cleanroom ${seconds(turn.cleanroom.medianMs)} (${turn.generatedTokens.cleanroom} tokens), ` +
            `plain node-llama-cpp script ${seconds(turn.plainScript.medianMs)} (${turn.generatedTokens.plainScript} tokens): ${turn.ratio}x${load(turn.plainScript)}`),
        ...(times.gpuAuto == null ? [] : [`  one turn, --gpu auto (ran on: ${times.gpuAuto.autoRanOn ?? "?"}) ${seconds(times.gpuAuto.auto.medianMs)} ` +
            `against --gpu off ${seconds(times.gpuAuto.off.medianMs)}: looking for a GPU adds ${seconds(times.gpuAuto.extraMs)} per process${load(times.gpuAuto.off)}`])
    ];
}

import {spawn} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {findLlamaBench, rawTokensPerSecond} from "./rawLlamaCpp.js";
import {loadAverage1m, median, round} from "./stats.js";
import type {EngineFigures, ThreadsChildInput, ThreadsChildOutput} from "./threadsChild.js";

/** How a process runs llama.cpp: set when it starts, so each configuration is its own process. */
export type ThreadConfiguration = {
    id: string, label: string, env: NodeJS.ProcessEnv,
    /** A GPU backend plain node-llama-cpp offloads to (see ThreadsChildInput); measured at the first thread count, in the first repeat only. */
    gpu?: string
};

export type ThreadMatrixOptions = {
    models: Array<{name: string, path: string}>,
    threads: number[],
    /** Processes per configuration and model, in alternating order. */
    repeats: number,
    tokens: number,
    prefillTokens: number,
    maxMs: number,
    /** Whether a build made by `cleanroom engine build` is present (adds its configurations). */
    localBuild: boolean,
    /** A GPU backend to add as a configuration ("vulkan", "cuda", "metal"), or null for none. */
    gpu: string | null,
    log: (line: string) => void
};

type Cell = {plain: EngineFigures, cleanroom: EngineFigures, prefillPromptTokens: number};
export type ThreadMatrixReport = {
    configurations: Array<{id: string, label: string, llamaBuild: string | null, uvThreadpoolSize: number | null, gpu: ThreadsChildOutput["gpu"],
        /** The 1-minute load average after each of its processes, median: beside its figures. */
        loadAverage1m?: number | null}>,
    /** The same for llama-bench's runs. */
    rawLlamaCppLoadAverage1m?: number | null,
    models: Record<string, {
        /** configuration id -> thread count -> median figures over the repeats */
        byConfiguration: Record<string, Record<string, Cell>>,
        rawLlamaCpp: Record<string, {generation: number | null, prefill: number | null}> | null
    }>,
    rawLlamaCppNote: string
};

const childEntry = path.join(path.dirname(fileURLToPath(import.meta.url)), "threadsChild.ts");

export function threadConfigurations(localBuild: boolean, gpu: string | null = null): ThreadConfiguration[] {
    // The CPU configurations run the CPU binary (--gpu off), as before GPU offload: `auto` may load a GPU binary that finds no device.
    const prebuilt = {CLEANROOM_LLAMA_BUILD: "prebuilt", CLEANROOM_GPU: "off"};
    return [
        {id: "before", label: "before: prebuilt, libuv pool 4", env: {...prebuilt, UV_THREADPOOL_SIZE: undefined}},
        {id: "prebuilt", label: "now: prebuilt, pool 1", env: {...prebuilt, UV_THREADPOOL_SIZE: "1"}},
        ...(localBuild ? [
            {id: "local", label: "now: built here (engine build, OpenMP), pool 1", env: {CLEANROOM_LLAMA_BUILD: undefined, CLEANROOM_GPU: "off", UV_THREADPOOL_SIZE: "1"}},
            {id: "localPool4", label: "built here (engine build, OpenMP), pool 4", env: {CLEANROOM_LLAMA_BUILD: undefined, CLEANROOM_GPU: "off", UV_THREADPOOL_SIZE: undefined}}
        ] : []),
        // CLEANROOM_GPU: the engine's --gpu (it offloads as its fit estimate says, and reports the layers it did).
        ...(gpu != null ? [{id: "gpu", label: `GPU: ${gpu}, pool 1`, env: {...prebuilt, UV_THREADPOOL_SIZE: "1", CLEANROOM_GPU: gpu}, gpu}] : [])
    ];
}

function runChild(configuration: ThreadConfiguration, input: ThreadsChildInput): Promise<ThreadsChildOutput> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [...process.execArgv, childEntry, JSON.stringify(input)], {
            env: {...process.env, ...configuration.env}, stdio: ["ignore", "pipe", "inherit"]
        });
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.once("error", reject);
        child.once("exit", (code) => {
            const line = stdout.trim().split("\n").at(-1) ?? "";
            if (code === 0 && line.startsWith("{"))
                resolve(JSON.parse(line) as ThreadsChildOutput);
            else
                reject(new Error(`bench child for ${configuration.id} exited with ${code}`));
        });
    });
}

/**
 * Plain node-llama-cpp and Cleanroom at each thread count, before and after the thread fix,
 * beside llama-bench at the same counts. Every configuration runs in fresh processes, in
 * alternating order (ABBA) across repeats, so that load on the machine hits all alike.
 */
export async function runThreadMatrix(options: ThreadMatrixOptions): Promise<ThreadMatrixReport> {
    const configurations = threadConfigurations(options.localBuild, options.gpu);
    const llamaBench = findLlamaBench();
    const runs: Record<string, Record<string, ThreadsChildOutput[]>> = {};
    const raw: Record<string, Record<string, {generation: Array<number | null>, prefill: Array<number | null>}>> = {};
    const described: Record<string, ThreadsChildOutput> = {};
    const loads: Record<string, number[]> = {};
    const steps = options.models.flatMap((model) => [
        ...configurations.map((configuration) => ({model, configuration})),
        {model, configuration: null}
    ]);
    for (let repeat = 0; repeat < options.repeats; repeat++) {
        const threads = repeat % 2 === 0 ? options.threads : [...options.threads].reverse();
        for (const {model, configuration} of repeat % 2 === 0 ? steps : [...steps].reverse()) {
            if (configuration == null) {
                if (llamaBench == null)
                    continue;
                // The same prompt length as the children's (their history renders to a few tokens more than asked).
                const promptTokens = Object.values(Object.values(runs[model.name] ?? {})[0]?.[0]?.byThreads ?? {})[0]?.prefillPromptTokens ?? options.prefillTokens;
                for (const count of threads) {
                    const cell = ((raw[model.name] ??= {})[count] ??= {generation: [], prefill: []});
                    cell.generation.push(rawTokensPerSecond(llamaBench, model.path, count, "generation", options.tokens));
                    cell.prefill.push(rawTokensPerSecond(llamaBench, model.path, count, "prefill", promptTokens, 2));
                }
                (loads.llamaBench ??= []).push(loadAverage1m());
                continue;
            }
            if (configuration.gpu != null && repeat > 0)
                continue; // slow on a software device: once, at one count
            options.log(`  threads: ${model.name}, ${configuration.label} (repeat ${repeat + 1} of ${options.repeats})`);
            const output = await runChild(configuration, {
                model: model.path, threads: configuration.gpu != null ? options.threads.slice(0, 1) : threads, tokens: options.tokens, runs: 1,
                maxMs: options.maxMs, prefillTokens: options.prefillTokens, gpu: configuration.gpu
            });
            ((runs[model.name] ??= {})[configuration.id] ??= []).push(output);
            described[configuration.id] = output;
            (loads[configuration.id] ??= []).push(loadAverage1m());
        }
    }

    const medianOf = (values: Array<number | null>) => {
        const present = values.filter((value): value is number => value != null && Number.isFinite(value));
        return present.length === 0 ? null : round(median(present), 1);
    };
    const report: ThreadMatrixReport = {
        configurations: configurations.map(({id, label}) => ({
            id, label, llamaBuild: described[id]?.llamaBuild ?? null, uvThreadpoolSize: described[id]?.uvThreadpoolSize ?? null, gpu: described[id]?.gpu ?? null,
            loadAverage1m: medianOf(loads[id] ?? [])
        })),
        rawLlamaCppLoadAverage1m: medianOf(loads.llamaBench ?? []),
        models: {},
        rawLlamaCppNote: llamaBench == null
            ? "no llama-bench build found: run scripts/build-llama-cpp.sh (about 7 minutes on 2 cores)"
            : `llama-bench at ${llamaBench} (built with OpenMP, persistent thread pool; flash attention off, as in Cleanroom's contexts)`
    };
    for (const model of options.models) {
        const byConfiguration: Record<string, Record<string, Cell>> = {};
        for (const configuration of configurations) {
            const outputs = runs[model.name]?.[configuration.id] ?? [];
            byConfiguration[configuration.id] = Object.fromEntries(options.threads.filter((count) => outputs.some((output) => output.byThreads[count] != null)).map((count) => {
                const cells = outputs.map((output) => output.byThreads[count]).filter((cell) => cell != null);
                const figure = (engine: "plain" | "cleanroom", kind: keyof EngineFigures) => medianOf(cells.map((cell) => cell[engine][kind])) ?? NaN;
                return [count, {
                    plain: {generation: figure("plain", "generation"), prefill: figure("plain", "prefill")},
                    cleanroom: {generation: figure("cleanroom", "generation"), prefill: figure("cleanroom", "prefill")},
                    prefillPromptTokens: cells[0]?.prefillPromptTokens ?? 0
                }];
            }));
        }
        const rawByThreads = raw[model.name];
        report.models[model.name] = {
            byConfiguration,
            rawLlamaCpp: rawByThreads == null ? null : Object.fromEntries(Object.entries(rawByThreads).map(([count, cell]) => [
                count, {generation: medianOf(cell.generation), prefill: medianOf(cell.prefill)}
            ]))
        };
    }
    return report;
}

/** The matrix as text: per model and figure, a row per thread count, a column per configuration. */
export function formatThreadMatrix(report: ThreadMatrixReport, threads: number[]) {
    const lines: string[] = [];
    for (const [name, model] of Object.entries(report.models)) {
        for (const kind of ["generation", "prefill"] as const) {
            const prompt = Object.values(Object.values(model.byConfiguration)[0] ?? {})[0]?.prefillPromptTokens;
            lines.push("", `${name}, ${kind === "generation" ? "generation" : `prefill (${prompt}-token prompt)`} tok/s, median; plain node-llama-cpp / Cleanroom`);
            const header = ["threads", "llama-bench", ...report.configurations.map((configuration) => configuration.label)];
            const rows = threads.map((count) => [
                String(count),
                String(model.rawLlamaCpp?.[count]?.[kind] ?? "-"),
                ...report.configurations.map((configuration) => {
                    const cell = model.byConfiguration[configuration.id]?.[count];
                    // Cleanroom on a GPU configuration that offloaded nothing ran on the CPU: say so.
                    const onCpu = configuration.gpu != null && configuration.gpu.cleanroomGpuLayers === 0 ? " (CPU)" : "";
                    return cell == null ? "-" : `${cell.plain[kind]} / ${cell.cleanroom[kind]}${onCpu}`;
                })
            ]);
            const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
            for (const row of [header, ...rows])
                lines.push("  " + row.map((cell, column) => cell.padEnd(widths[column]!)).join("  "));
        }
    }
    lines.push("", report.rawLlamaCppNote);
    const load = (value: number | null | undefined) => (value == null ? "-" : value.toFixed(2));
    lines.push(`load average (1 min, median after each process): ${report.configurations.map((configuration) => `${configuration.label} ${load(configuration.loadAverage1m)}`).join("; ")}` +
        `; llama-bench ${load(report.rawLlamaCppLoadAverage1m)}`);
    for (const {label, gpu} of report.configurations)
        if (gpu != null)
            lines.push(`${label}: ${gpu.device ?? "no device"}; plain node-llama-cpp offloaded ${gpu.plainGpuLayers} layers, Cleanroom ${gpu.cleanroomGpuLayers}` +
                `${gpu.cleanroomGpuLayers === 0 ? " (Cleanroom's fit estimate offloaded nothing: its figures there are CPU figures)" : ""}; llama-bench: no GPU build`);
    return lines;
}

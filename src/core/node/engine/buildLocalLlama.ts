import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import type {EngineBuildPhase} from "../../common/api/engineSchemas.js";
import {EngineBuildCancelledError} from "./EngineBuildCancelledError.js";
import {EngineBuildDiskFullError} from "./EngineBuildDiskFullError.js";
import {EngineBuildFailedError} from "./EngineBuildFailedError.js";
import {EngineBuildToolsMissingError} from "./EngineBuildToolsMissingError.js";
import {findLlamaBuildTools} from "./findLlamaBuildTools.js";
import {findLocalLlamaBuild, isLocalLlamaBuildFinished, llamaBuildSetup, localLlamaBuildCmakeOptions, type LocalLlamaBuild} from "./localLlamaBuild.js";

export type LlamaBuildProgress = {
    phase: EngineBuildPhase,
    /** From cmake's `[ NN%]` lines while compiling, else `null`. */
    percent: number | null,
    /** The build's latest output line (colours removed). */
    line: string | null
};

export type BuildLocalLlamaOptions = {
    /** Called when the phase or the percentage changes. */
    onProgress?: (progress: LlamaBuildProgress) => void,
    /** Stops the build (its whole process group); what it made is removed, and the call rejects with `EngineBuildCancelledError`. */
    signal?: AbortSignal,
    /** Defaults to `process.env`. */
    env?: NodeJS.ProcessEnv
};

/** Output lines kept for a failure's message. */
const tailLines = 25;
/** After SIGTERM, how long the build gets to stop before SIGKILL. */
const killGraceMs = 5000;
/** Make's `[ 42%] Building …`, or Ninja's `[120/283] Building …` (cmake picks Ninja when it is installed). */
const makePercentPattern = /\[\s*(\d{1,3})%\]/;
const ninjaStepPattern = /^\[(\d+)\/(\d+)\]/;
const diskFullPattern = /No space left on device|ENOSPC/i;
const ansiPattern = /\x1b\[[0-9;?]*[A-Za-z]/g;

/**
 * Builds node-llama-cpp's bundled llama.cpp for this CPU (`GGML_NATIVE`, with OpenMP) into its
 * `llama/localBuilds`, where `loadLlama` finds it from the next load of the native backend on
 * (about 9-12 minutes on 2 cores). It runs node-llama-cpp's `source download` (the git bundle it
 * ships, no network) in a child process of its own process group, so the caller's event loop only
 * reads its output. Checks for cmake, a C++ compiler and make first (`EngineBuildToolsMissingError`).
 * A build that fails or is cancelled leaves nothing node-llama-cpp would load: it marks a finished
 * build with `buildDone.status`, written last, and every folder without one is removed here.
 */
export async function buildLocalLlama({onProgress, signal, env = process.env}: BuildLocalLlamaOptions = {}): Promise<LocalLlamaBuild> {
    const report = progressReporter(onProgress);
    report({phase: "checking", percent: null, line: null});
    const missing = findLlamaBuildTools(env).filter((tool) => tool.path == null);
    if (missing.length > 0)
        throw new EngineBuildToolsMissingError(missing);
    if (signal?.aborted === true)
        throw new EngineBuildCancelledError();

    const setup = llamaBuildSetup(env);
    const childEnv: NodeJS.ProcessEnv = {...env, ELECTRON_RUN_AS_NODE: "1", NO_COLOR: "1", FORCE_COLOR: "0"};
    // node-llama-cpp reads custom CMake options from NODE_LLAMA_CPP_CMAKE_OPTION_<name>, and names the build folder after them.
    for (const [name, value] of Object.entries(localLlamaBuildCmakeOptions))
        childEnv[`NODE_LLAMA_CPP_CMAKE_OPTION_${name}`] = value;
    report({phase: "preparing", percent: null, line: null});

    const child = spawn(process.execPath, [setup.script, ...setup.args], {env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true});
    const tail: string[] = [];
    let diskFull = false;
    let cancelled = false;
    const onLine = (raw: string) => {
        for (const part of raw.replace(ansiPattern, "").split("\r")) {
            const line = part.trim();
            if (line === "")
                continue;
            tail.push(line);
            if (tail.length > tailLines)
                tail.shift();
            diskFull ||= diskFullPattern.test(line);
            const percent = percentOf(line);
            if (percent != null)
                report({phase: "compiling", percent, line});
            else if (/^Compiled llama\.cpp/i.test(line))
                report({phase: "finishing", percent: 100, line});
        }
    };
    readline.createInterface({input: child.stdout}).on("line", onLine);
    readline.createInterface({input: child.stderr}).on("line", onLine);

    let killTimer: NodeJS.Timeout | undefined;
    const stop = () => {
        cancelled = true;
        signalGroup(child.pid, "SIGTERM");
        killTimer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), killGraceMs);
    };
    signal?.addEventListener("abort", stop, {once: true});
    try {
        const exit = await new Promise<{code: number | null, signal: NodeJS.Signals | null}>((resolve, reject) => {
            child.once("error", reject);
            child.once("close", (code, exitSignal) => resolve({code, signal: exitSignal}));
        });
        if (cancelled || exit.code !== 0) {
            removeUnfinishedBuilds(setup.localBuildsDirectory);
            if (cancelled)
                throw new EngineBuildCancelledError();
            if (diskFull)
                throw new EngineBuildDiskFullError(setup.localBuildsDirectory, freeBytes(setup.localBuildsDirectory));
            throw new EngineBuildFailedError(exit.code, exit.signal, tail.join("\n"));
        }
        const build = findLocalLlamaBuild(setup.localBuildsDirectory);
        if (build == null)
            throw new EngineBuildFailedError(exit.code, null, `${tail.join("\n")}\n(the build ended without a finished build in ${setup.localBuildsDirectory})`);
        return build;
    } finally {
        signal?.removeEventListener("abort", stop);
        clearTimeout(killTimer);
    }
}

function percentOf(line: string): number | null {
    const make = makePercentPattern.exec(line);
    if (make != null)
        return Math.min(100, Number(make[1]));
    const ninja = ninjaStepPattern.exec(line);
    return ninja != null && Number(ninja[2]) > 0 ? Math.min(100, Math.floor(100 * Number(ninja[1]) / Number(ninja[2]))) : null;
}

/** Reports a step only when the phase or percentage changed. */
function progressReporter(onProgress: BuildLocalLlamaOptions["onProgress"]) {
    let last: LlamaBuildProgress | null = null;
    return (progress: LlamaBuildProgress) => {
        if (last != null && last.phase === progress.phase && last.percent === progress.percent)
            return;
        last = progress;
        onProgress?.(progress);
    };
}

function signalGroup(pid: number | undefined, name: NodeJS.Signals) {
    if (pid == null)
        return;
    try {
        process.kill(-pid, name);
    } catch {
        // the group has exited
    }
}

/** Removes every build folder without node-llama-cpp's finished marker, and its lock. */
function removeUnfinishedBuilds(localBuildsDirectory: string) {
    let names: string[];
    try {
        names = fs.readdirSync(localBuildsDirectory, {withFileTypes: true}).filter((entry) => entry.isDirectory() && !entry.name.endsWith(".lock")).map((entry) => entry.name);
    } catch {
        return;
    }
    for (const name of names) {
        const directory = path.join(localBuildsDirectory, name);
        if (!isLocalLlamaBuildFinished(directory)) {
            fs.rmSync(directory, {recursive: true, force: true});
            fs.rmSync(`${directory}.lock`, {recursive: true, force: true});
        }
    }
}

function freeBytes(directory: string): number | null {
    try {
        const stats = fs.statfsSync(directory);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}

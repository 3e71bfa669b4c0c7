import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

/**
 * The CMake options of the optional CPU build `cleanroom engine build` makes (`buildLocalLlama`):
 * node-llama-cpp keeps it under a folder named after them, and `getLlama` with the same options
 * finds it there, or falls back to the prebuilt binary. OpenMP keeps one thread team alive across
 * decodes; the prebuilt binary (built without it) starts fresh threads for every decode.
 */
export const localLlamaBuildCmakeOptions: Readonly<Record<string, string>> = Object.freeze({GGML_OPENMP: "ON"});

/**
 * Runs a stand-in for the build (a Node script) instead of node-llama-cpp's: only tests set it, since
 * the real build takes 10 minutes and writes into node_modules. With it, builds go to and are looked
 * for in `CLEANROOM_LLAMA_LOCAL_BUILDS` instead of node-llama-cpp's folder.
 */
export const llamaBuildStandInVariable = "CLEANROOM_LLAMA_BUILD_STAND_IN";
const standInBuildsVariable = "CLEANROOM_LLAMA_LOCAL_BUILDS";

/** node-llama-cpp's marker of a finished local build: written last, so a build stopped half-way never has it. */
const buildDoneFileName = "buildDone.status";
const buildConfigType = "Release";

/** What runs the build, and where it puts it. */
export type LlamaBuildSetup = {
    /** node-llama-cpp's `llama/localBuilds` (or the stand-in's folder). */
    localBuildsDirectory: string,
    /** A Node script and its arguments, run with this process's Node. */
    script: string,
    args: string[],
    /** `true` when a test's stand-in replaces node-llama-cpp's build. */
    standIn: boolean
};

/** A finished local build of the options above, as node-llama-cpp would load it. */
export type LocalLlamaBuild = {
    /** The build's folder (its `Release` folder holds the binaries). */
    directory: string,
    binaryDirectory: string,
    cmakeOptions: Record<string, string>
};

export function llamaBuildSetup(env: NodeJS.ProcessEnv = process.env): LlamaBuildSetup {
    const standIn = env[llamaBuildStandInVariable];
    if (standIn != null && standIn !== "")
        return {localBuildsDirectory: env[standInBuildsVariable] ?? path.join(path.dirname(standIn), "localBuilds"), script: standIn, args: [], standIn: true};
    const root = nodeLlamaCppRoot();
    return {
        localBuildsDirectory: path.join(root, "llama", "localBuilds"),
        // `source download` clones the release node-llama-cpp ships as a git bundle (no network), then builds it.
        script: path.join(root, "dist", "cli", "cli.js"),
        args: ["source", "download", "--gpu", "false", "--noUsageExample"],
        standIn: false
    };
}

/** node-llama-cpp's package folder. */
export function nodeLlamaCppRoot() {
    // resolves to <root>/dist/index.js
    return path.resolve(path.dirname(fileURLToPath(import.meta.resolve("node-llama-cpp"))), "..");
}

/** The finished CPU build with `localLlamaBuildCmakeOptions` in `localBuildsDirectory`, or `null`: half-made builds (no `buildDone.status`) are skipped. */
export function findLocalLlamaBuild(localBuildsDirectory: string): LocalLlamaBuild | null {
    let names: string[];
    try {
        names = fs.readdirSync(localBuildsDirectory);
    } catch {
        return null;
    }
    for (const name of names.sort()) {
        const directory = path.join(localBuildsDirectory, name);
        const binaryDirectory = path.join(directory, buildConfigType);
        if (!isLocalLlamaBuildFinished(directory) || !fs.existsSync(path.join(binaryDirectory, "llama-addon.node")))
            continue;
        const cmakeOptions = readCmakeOptions(binaryDirectory);
        if (cmakeOptions != null && Object.entries(localLlamaBuildCmakeOptions).every(([option, value]) => cmakeOptions[option] === value))
            return {directory, binaryDirectory, cmakeOptions};
    }
    return null;
}

export function isLocalLlamaBuildFinished(directory: string) {
    return fs.existsSync(path.join(directory, buildDoneFileName));
}

/**
 * How long node-llama-cpp counts a build's lock as held since its builder last refreshed it (proper-lockfile's
 * `stale`, as node-llama-cpp's `withLockfile` and `waitForLockfileRelease` set it; the builder refreshes it twice as often).
 */
const buildLockStaleMs = 10_000;

/**
 * Whether a local build is being made in `localBuildsDirectory` now (by `cleanroom engine build`, the app's
 * Settings → Engine, or node-llama-cpp's own CLI): a `<build folder>.lock` folder refreshed within node-llama-cpp's stale time.
 */
export function isLocalLlamaBuildRunning(localBuildsDirectory: string, now = Date.now()): boolean {
    let names: string[];
    try {
        names = fs.readdirSync(localBuildsDirectory);
    } catch {
        return false;
    }
    return names.some((name) => {
        if (!name.endsWith(".lock"))
            return false;
        try {
            return now - fs.statSync(path.join(localBuildsDirectory, name)).mtimeMs < buildLockStaleMs;
        } catch {
            return false;
        }
    });
}

/** A CPU build's custom CMake options from node-llama-cpp's `_nlcBuildMetadata.json`, `null` for a GPU build or unreadable metadata. */
function readCmakeOptions(binaryDirectory: string): Record<string, string> | null {
    try {
        const metadata = JSON.parse(fs.readFileSync(path.join(binaryDirectory, "_nlcBuildMetadata.json"), "utf8")) as {buildOptions?: {gpu?: unknown, customCmakeOptions?: unknown}};
        const options = metadata.buildOptions;
        if (options?.gpu !== false || typeof options.customCmakeOptions !== "object" || options.customCmakeOptions == null)
            return null;
        return Object.fromEntries(Object.entries(options.customCmakeOptions).map(([key, value]) => [key, String(value)]));
    } catch {
        return null;
    }
}

/**
 * The CMake options a process loads llama.cpp with: the local build's when a finished one is in `localBuildsDirectory`
 * and no build is being made there, else none (the prebuilt binary). While a build is being made, node-llama-cpp
 * would wait for it to end before loading anything (minutes, saying nothing: `cleanroom serve` printed no URL), so a
 * process that starts meanwhile runs on the prebuilt binary, and the next one on the new build.
 */
export function cmakeOptionsToLoad(localBuildsDirectory: string, now = Date.now()): Readonly<Record<string, string>> {
    return findLocalLlamaBuild(localBuildsDirectory) != null && !isLocalLlamaBuildRunning(localBuildsDirectory, now) ? localLlamaBuildCmakeOptions : {};
}

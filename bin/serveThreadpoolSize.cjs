// The libuv pool `cleanroom serve` starts with. Decided before anything has used the pool, by
// bin/cleanroom.cjs for the compiled CLI and by runCliProgram's relaunch when run from source:
// plain CommonJS, so that the launcher can require it before the CLI is compiled.
"use strict";

/** `serve --parallel`'s default: src/serve/startApiServer.ts's `defaultApiParallel` (test/unit/serveThreadpoolSize.test.ts holds them equal). */
const defaultServeParallel = 4;

/**
 * For `serve`: `--parallel` (requests served at once, default 4) capped at `cores`, at least 1.
 * node-llama-cpp runs each decode as a job on libuv's pool, so this many requests' contexts then
 * decode at once, each on a core of its own (docs/local-server.md, "Fifth round"); with a pool of 1
 * they take turns. Null for every other command: those run the chat core, whose pool is 1
 * (src/core/common/coreProcessEnv.ts, docs/threads.md).
 * @param {readonly string[]} args the command line after the script, as `process.argv.slice(2)`
 * @param {number} cores `os.availableParallelism()`
 * @returns {number | null}
 */
function serveThreadpoolSize(args, cores) {
    if (args.find((arg) => !arg.startsWith("-")) !== "serve")
        return null;
    const parallel = parallelOption(args) ?? defaultServeParallel;
    return Math.max(1, Math.min(parallel, Math.floor(cores)));
}

/** `--parallel <n>` or `--parallel=<n>`, the last one given (as commander takes it); null when absent or not a whole number from 1 (commander refuses it then). */
function parallelOption(args) {
    let given = null;
    args.forEach((arg, index) => {
        if (arg === "--parallel")
            given = args[index + 1] ?? null;
        else if (arg.startsWith("--parallel="))
            given = arg.slice("--parallel=".length);
    });
    const parallel = given != null && /^\d+$/.test(given) ? Number(given) : NaN;
    return Number.isSafeInteger(parallel) && parallel >= 1 ? parallel : null;
}

module.exports = {serveThreadpoolSize, defaultServeParallel};

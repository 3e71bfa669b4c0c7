#!/usr/bin/env node
// The `cleanroom` command, for plain `node`: starts the compiled CLI (bin/cliBundle.mjs builds
// it; rebuilt here first when a source changed since). CommonJS on purpose: its first lines run
// before Node has queued any work on libuv's thread pool, which an ES module entry cannot promise.
"use strict";
// CLEANROOM_TRACE_STARTUP=1 (src/core/node/startupTrace.ts): when this file began and when the compiled CLI was checked.
const launcherMarks = process.env.CLEANROOM_TRACE_STARTUP === "1" ? (globalThis[Symbol.for("cleanroom.launcherMarks")] = {startedMs: performance.now()}) : null;

// 1. The core's one-thread libuv pool (src/core/common/coreProcessEnv.ts). libuv reads
// UV_THREADPOOL_SIZE once, when the pool starts at its first use, so setting it here, before any
// asynchronous file access, takes effect in this very process: no relaunch. Not when a module was
// preloaded (--import, --require, a loader): that may have started the pool already, and then
// the core relaunches the command with it (relaunchWithCoreThreadpool). A user's own value is kept.
const preloads = /(^|\s)(--import|--require|-r|--loader|--experimental-loader)(=|\s|$)/;
const preloaded = process.execArgv.some((arg) => preloads.test(arg)) || preloads.test(process.env.NODE_OPTIONS ?? "");
if (process.env.UV_THREADPOOL_SIZE == null && !preloaded) {
    process.env.UV_THREADPOOL_SIZE = "1";
    // Tells startupThreadpoolSize that this process's pool got the value, though its start environment lacks it.
    process.env.CLEANROOM_THREADPOOL_SET_IN_PROCESS = String(process.pid);
}

// 2. For cliCommand (src/cli/cliCommand.ts): the compiled CLI starts its children (the self-test's fresh process) through this file.
globalThis[Symbol.for("cleanroom.cliLauncher")] = __filename;

const path = require("node:path");
const {pathToFileURL} = require("node:url");

import(pathToFileURL(path.join(__dirname, "cliBundle.mjs")).href)
    .then(({runBundleEntry}) => runBundleEntry("main", "cleanroom", () => {
        if (launcherMarks != null)
            launcherMarks.bundleCheckedMs = performance.now();
    }));

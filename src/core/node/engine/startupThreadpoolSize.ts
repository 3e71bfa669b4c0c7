import fs from "node:fs";
import {threadpoolSetInProcessEnv} from "../../common/coreProcessEnv.js";

/** libuv's own default, used when `UV_THREADPOOL_SIZE` is not set. */
const libuvDefaultThreadpoolSize = 4;

/**
 * The size of libuv's thread pool in this process, as libuv decided it: from `UV_THREADPOOL_SIZE`
 * in the environment the process was started with (on Linux read from /proc/self/environ, which
 * a later `process.env` change does not touch), or from `process.env` where the compiled CLI's
 * launcher set it before the pool started; else libuv's default.
 */
export function startupThreadpoolSize(): number {
    let value = process.env.UV_THREADPOOL_SIZE;
    if (process.platform === "linux" && process.env[threadpoolSetInProcessEnv] !== String(process.pid)) {
        try {
            const initial = fs.readFileSync("/proc/self/environ", "utf8").split("\0").find((entry) => entry.startsWith("UV_THREADPOOL_SIZE="));
            value = initial?.slice("UV_THREADPOOL_SIZE=".length);
        } catch {
            // Not readable: fall back to the current environment.
        }
    }
    const size = Number.parseInt(value ?? "", 10);
    return Number.isFinite(size) ? Math.min(1024, Math.max(1, size)) : libuvDefaultThreadpoolSize;
}

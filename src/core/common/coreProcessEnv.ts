/**
 * Environment every process that runs the core (and so llama.cpp) starts with. libuv reads
 * `UV_THREADPOOL_SIZE` once, when it starts its thread pool at its first use, which in an ES module
 * entry is before the entry's first line runs; so it has to be in the environment the process is
 * started with, or be set by the first lines of a CommonJS entry (bin/cleanroom.cjs), which run
 * before anything has used the pool.
 * One pool thread means every llama.cpp decode runs on the same OS thread: with the default four,
 * decodes rotate over the pool's threads, and an OpenMP build then keeps one thread team per
 * thread, sees more threads than cores and stops spinning at its barriers (docs/threads.md).
 */
export const coreProcessEnv = Object.freeze({UV_THREADPOOL_SIZE: "1"});

/**
 * Set by bin/cleanroom.cjs to its own process id when it put `UV_THREADPOOL_SIZE` into
 * `process.env` before libuv's pool started: that process's pool has the value, though the
 * environment it started with lacks it (see `startupThreadpoolSize`). Its children inherit the
 * variable with another pid, and `UV_THREADPOOL_SIZE` in their start environment.
 */
export const threadpoolSetInProcessEnv = "CLEANROOM_THREADPOOL_SET_IN_PROCESS";

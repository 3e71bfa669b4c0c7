/**
 * Environment every process that runs the core (and so llama.cpp) starts with. libuv reads
 * `UV_THREADPOOL_SIZE` once, when it starts its thread pool, which in an ES module entry is before
 * the entry's first line runs; so it has to be in the environment the process is started with.
 * One pool thread means every llama.cpp decode runs on the same OS thread: with the default four,
 * decodes rotate over the pool's threads, and an OpenMP build then keeps one thread team per
 * thread, sees more threads than cores and stops spinning at its barriers (README, "Threads").
 */
export const coreProcessEnv = Object.freeze({UV_THREADPOOL_SIZE: "1"});

/** How `cleanroom serve`'s process shares the CPU among the requests it serves at once. */
export type ServeThreading = {
    /** libuv's pool in serve's process (1, the core's, unless `UV_THREADPOOL_SIZE` says): how many requests' contexts decode at once. */
    threadpoolSize: number,
    /** Requests served at once (`--parallel`). */
    parallel: number,
    /** Threads a context decodes with while it decodes alone (the measured count, or `--threads`). */
    threadsPerContext: number,
    /** The cap on the threads of all decodes running at once, split among them; null with a pool of 1 (decodes take turns). */
    threadsInAll: number | null
};

/**
 * The cap on the threads of serve's decodes running at once: the cores, once the pool lets more
 * than one decode run (`UV_THREADPOOL_SIZE=2 cleanroom serve`: docs/local-server.md, "Threads"). node-llama-cpp (`llama.maxThreads`, its ThreadsSplitter) then splits them
 * at each decode: a context decoding alone keeps its whole count, two at once get half each (at
 * least 1), so spinning threads never outnumber the cores (docs/threads.md, cause 3). With a pool
 * of 1 its default stays, as in the chat core: one decode at a time needs no split.
 */
export function serveThreadsInAll(threadpoolSize: number, cores: number): number | null {
    return threadpoolSize > 1 ? Math.max(1, Math.floor(cores)) : null;
}

/** The line serve writes to stderr once it listens, after the one `describeServing` writes. */
export function describeServeThreading({threadpoolSize, parallel, threadsPerContext, threadsInAll}: ServeThreading) {
    const perContext = `${threadsPerContext} ${threadsPerContext === 1 ? "thread" : "threads"} per context`;
    const atOnce = Math.min(threadpoolSize, parallel);
    return threadsInAll == null || atOnce === 1
        ? `Threads: libuv pool ${threadpoolSize} (one request decodes at a time), ${perContext}`
        : `Threads: libuv pool ${threadpoolSize} (up to ${atOnce} requests decode at once), ${perContext} decoding alone, ` +
            `at most ${threadsInAll} in all (shared among the requests decoding at once)`;
}

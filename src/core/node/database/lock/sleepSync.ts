const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms`: opening a database is synchronous (better-sqlite3), and so is its wait for another process's switch to end. */
export function sleepSync(ms: number): void {
    Atomics.wait(sleeper, 0, 0, ms);
}

/** A short wait before trying a lock again, jittered so that two processes retrying together do not keep colliding. */
export function sleepBeforeRetry(): void {
    sleepSync(20 + Math.random() * 30);
}

import type {ChildProcess} from "node:child_process";

export type WatchedOutput = {
    /** Everything the process wrote so far (stdout and stderr, as a terminal merges them). */
    output: () => string,
    /** Resolves once the output matches, starting at `from` (a hang guard rejects after `timeoutMs`; the process ending without it rejects at once). */
    waitFor: (pattern: RegExp, options?: {from?: number, timeoutMs?: number}) => Promise<string>,
    /** The exit code. */
    exited: Promise<number | null>
};

/** Follows what a spawned process (stdio piped) writes, for tests that wait for a line instead of sleeping. */
export function watchOutput(child: ChildProcess): WatchedOutput {
    let output = "";
    let closed = false;
    const waiters = new Set<() => void>();
    const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        for (const check of waiters)
            check();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const exited = new Promise<number | null>((resolve, reject) => {
        child.on("error", reject);
        child.on("close", (code) => {
            closed = true;
            for (const check of waiters)
                check();
            resolve(code);
        });
    });
    return {
        output: () => output,
        waitFor: (pattern, {from = 0, timeoutMs = 60_000} = {}) => new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                waiters.delete(check);
                reject(new Error(`the process never wrote ${pattern}; it wrote:\n${output.slice(from)}`));
            }, timeoutMs);
            const check = () => {
                const match = pattern.exec(output.slice(from));
                if (match != null) {
                    clearTimeout(timer);
                    waiters.delete(check);
                    resolve(match[0]);
                } else if (closed) {
                    clearTimeout(timer);
                    waiters.delete(check);
                    reject(new Error(`the process ended without writing ${pattern}; it wrote:\n${output.slice(from)}`));
                }
            };
            waiters.add(check);
            check();
        }),
        exited
    };
}

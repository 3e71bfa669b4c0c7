import {spawn} from "node:child_process";
import {cliCommand} from "../../tools/spawnCli.js";

export type PseudoTerminalRun = {
    /** Everything the terminal showed so far (stdout and stderr, as a terminal merges them). */
    output: () => string,
    /** Types into the terminal ("\x03" is Ctrl+C). */
    type: (text: string) => void,
    /** Resolves once the output matches, starting at `from` (a hang guard rejects after `timeoutMs`). */
    waitFor: (pattern: RegExp, options?: {from?: number, timeoutMs?: number}) => Promise<string>,
    /** The CLI's exit code. */
    exited: Promise<number | null>
};

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/**
 * Runs the CLI on a real pseudo-terminal through util-linux `script` (so stdin, stdout and
 * stderr are a TTY, 120 columns wide), for tests of what a person at a terminal sees.
 */
export function runCliInPseudoTerminal(args: string[], {env, entry}: {env: NodeJS.ProcessEnv, entry?: string}): PseudoTerminalRun {
    const {command, args: fullArgs} = cliCommand(args, {entry});
    const shell = `stty cols 120 rows 40; exec ${[command, ...fullArgs].map(quote).join(" ")}`;
    const child = spawn("script", ["-qfec", shell, "/dev/null"], {env, stdio: ["pipe", "pipe", "pipe"]});
    let output = "";
    let closed = false;
    const waiters = new Set<() => void>();
    const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        for (const check of waiters)
            check();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
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
        type: (text) => void child.stdin.write(text),
        waitFor: (pattern, {from = 0, timeoutMs = 60_000} = {}) => new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                waiters.delete(check);
                reject(new Error(`the terminal never showed ${pattern}; it showed:\n${output.slice(from)}`));
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
                    reject(new Error(`the CLI ended without showing ${pattern}; it showed:\n${output.slice(from)}`));
                }
            };
            waiters.add(check);
            check();
        }),
        exited
    };
}

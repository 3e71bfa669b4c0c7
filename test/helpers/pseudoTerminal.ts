import {spawn} from "node:child_process";
import {cliCommand} from "../../tools/spawnCli.js";
import {watchOutput} from "./watchOutput.js";

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
    // A terminal shows both streams as one.
    const {output, waitFor, exited} = watchOutput(child);
    return {output, type: (text) => void child.stdin.write(text), waitFor, exited};
}

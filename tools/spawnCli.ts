import {spawn} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {cliCommand, type CliCommandOptions} from "../src/cli/cliCommand.js";
import {coreProcessEnv} from "../src/core/common/coreProcessEnv.js";

export {cliCommand, cliEntry, cliForm} from "../src/cli/cliCommand.js";

/** The developer tools' CLI (`sim-cloud`, `audit`): pass as `entry`. */
export const toolsCliEntry = path.join(path.dirname(fileURLToPath(import.meta.url)), "cli", "main.ts");

export type CliRun = {code: number | null, stdout: string, stderr: string};

export type CliRunOptions = CliCommandOptions & {
    env?: NodeJS.ProcessEnv,
    /** Written to stdin, which is then closed. Defaults to nothing. */
    input?: string
};

/**
 * For tests: runs a CLI in a fresh process and returns its exit code and output. The process
 * starts with the core's environment, so a command that runs the core need not relaunch itself
 * to get it (a variable that `env` sets, or sets to undefined, wins).
 */
export function runCliCapturing(args: string[], {env = process.env, input = "", ...command}: CliRunOptions = {}): Promise<CliRun> {
    const {command: executable, args: fullArgs} = cliCommand(args, command);
    return new Promise((resolve, reject) => {
        const child = spawn(executable, fullArgs, {env: {...coreProcessEnv, ...env}, stdio: ["pipe", "pipe", "pipe"]});
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        child.on("error", reject);
        child.on("close", (code) => resolve({code, stdout, stderr}));
        child.stdin.end(input);
    });
}

/** For tests: runs a CLI in a fresh process and returns its stdout, rejecting on a non-zero exit. */
export async function runCli(args: string[], options: Omit<CliRunOptions, "input"> = {}): Promise<string> {
    const {code, stdout, stderr} = await runCliCapturing(args, options);
    if (code !== 0)
        throw new Error(`cleanroom ${args[0]} exited with ${code}: ${stderr.trim()}`);

    return stdout;
}

import {spawn} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {coreProcessEnv} from "../core/common/coreProcessEnv.js";

export const cliEntry = path.join(path.dirname(fileURLToPath(import.meta.url)), "main.ts");

/** Arguments that run this CLI from source in a new Node process (tsx as the loader). */
export function cliCommand(args: string[]): {command: string, args: string[]} {
    return {command: process.execPath, args: ["--import", import.meta.resolve("tsx"), cliEntry, ...args]};
}

export type CliRun = {code: number | null, stdout: string, stderr: string};

/**
 * Runs the CLI in a fresh process (stdin: `input`, then closed) and returns its exit code and output.
 * The process starts with the core's environment, so a command that runs the core need not relaunch
 * itself to get it (a variable that `env` sets, or sets to undefined, wins).
 */
export function runCliCapturing(args: string[], {env = process.env, input = ""}: {env?: NodeJS.ProcessEnv, input?: string} = {}): Promise<CliRun> {
    const {command, args: fullArgs} = cliCommand(args);
    return new Promise((resolve, reject) => {
        const child = spawn(command, fullArgs, {env: {...coreProcessEnv, ...env}, stdio: ["pipe", "pipe", "pipe"]});
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        child.on("error", reject);
        child.on("close", (code) => resolve({code, stdout, stderr}));
        child.stdin.end(input);
    });
}

/** Runs the CLI in a fresh process and returns its stdout, rejecting on a non-zero exit. */
export async function runCli(args: string[], {env = process.env}: {env?: NodeJS.ProcessEnv} = {}): Promise<string> {
    const {code, stdout, stderr} = await runCliCapturing(args, {env});
    if (code !== 0)
        throw new Error(`cleanroom ${args[0]} exited with ${code}: ${stderr.trim()}`);

    return stdout;
}

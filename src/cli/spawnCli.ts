import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {coreProcessEnv} from "../core/common/coreProcessEnv.js";

const sourceDir = path.dirname(fileURLToPath(import.meta.url));
/** The CLI's TypeScript entry, run by tsx: the source form. */
export const cliEntry = path.join(sourceDir, "main.ts");
/** bin/cleanroom.cjs, the launcher of the compiled CLI (set by the launcher itself in a compiled run, whose files live elsewhere). */
const launcherKey = Symbol.for("cleanroom.cliLauncher");

export type CliCommandOptions = {
    /** Node options before the CLI's script, such as `--import <module>` to preload. Defaults to none. */
    nodeArgs?: string[],
    /** Whether a preload in `nodeArgs` is TypeScript, so that tsx must be loaded before it in either form. Defaults to `false`. */
    typeScriptPreloads?: boolean
};

/**
 * How this CLI runs as a process: "compiled" (bin/cleanroom.cjs and the esbuild bundle, which it
 * rebuilds first when a source changed) once the bundle has been built, as `npm install` does; else
 * "source" (tsx compiles src/cli/main.ts in the process). A compiled CLI starts its children compiled.
 */
export function cliForm(): "compiled" | "source" {
    return compiledLauncher() != null ? "compiled" : "source";
}

/** Arguments that run this CLI in a new Node process, in the form `cliForm` names. */
export function cliCommand(args: string[], {nodeArgs = [], typeScriptPreloads = false}: CliCommandOptions = {}): {command: string, args: string[]} {
    const tsx = () => ["--import", import.meta.resolve("tsx")];
    const launcher = compiledLauncher();
    if (launcher != null)
        return {command: process.execPath, args: [...(typeScriptPreloads ? tsx() : []), ...nodeArgs, launcher, ...args]};
    return {command: process.execPath, args: [...tsx(), ...nodeArgs, cliEntry, ...args]};
}

function compiledLauncher(): string | null {
    const running = (globalThis as Record<symbol, unknown>)[launcherKey];
    if (typeof running === "string")
        return running;
    const repoRoot = path.resolve(sourceDir, "../..");
    const launcher = path.join(repoRoot, "bin", "cleanroom.cjs");
    return fs.existsSync(path.join(repoRoot, "out", "cli", "current.json")) && fs.existsSync(launcher) ? launcher : null;
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

import {execFile} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {promisify} from "node:util";
import {coreProcessEnv} from "../core/common/coreProcessEnv.js";

const sourceDir = path.dirname(fileURLToPath(import.meta.url));
/** The CLI's TypeScript entry, run by tsx: the source form. */
export const cliEntry = path.join(sourceDir, "main.ts");
/** bin/cleanroom.cjs, the launcher of the compiled CLI (set by the launcher itself in a compiled run, whose files live elsewhere). */
const launcherKey = Symbol.for("cleanroom.cliLauncher");

export type CliCommandOptions = {
    /** Node options before the CLI's script, such as `--import <module>` to preload. Defaults to none. */
    nodeArgs?: string[],
    /** Another entry: a TypeScript one runs from source, by tsx (the developer tools' CLI); a JavaScript one as it is (a test build's). Defaults to this CLI, in the form `cliForm` names. */
    entry?: string
};

/**
 * How this CLI runs as a process: "compiled" (bin/cleanroom.cjs and the esbuild bundle, which it
 * rebuilds first when a source changed) once the bundle has been built, as `npm install` does; else
 * "source" (tsx compiles src/cli/main.ts in the process). A compiled CLI starts its children compiled.
 */
export function cliForm(): "compiled" | "source" {
    return compiledLauncher() != null ? "compiled" : "source";
}

/** Arguments that run this CLI (or `entry`) in a new Node process, in the form `cliForm` names. */
export function cliCommand(args: string[], {nodeArgs = [], entry}: CliCommandOptions = {}): {command: string, args: string[]} {
    const launcher = entry == null ? compiledLauncher() : null;
    if (launcher != null)
        return {command: process.execPath, args: [...nodeArgs, launcher, ...args]};
    const script = entry ?? cliEntry;
    return {command: process.execPath, args: [...(script.endsWith(".ts") ? ["--import", import.meta.resolve("tsx")] : []), ...nodeArgs, script, ...args]};
}

/** Runs this CLI in a fresh process with the core's environment and returns its stdout; rejects on a non-zero exit (with its stderr). */
export async function runCliForOutput(args: string[]): Promise<string> {
    const {command, args: fullArgs} = cliCommand(args);
    const {stdout} = await promisify(execFile)(command, fullArgs, {env: {...coreProcessEnv, ...process.env}, maxBuffer: 64 << 20});
    return stdout;
}

function compiledLauncher(): string | null {
    const running = (globalThis as Record<symbol, unknown>)[launcherKey];
    if (typeof running === "string")
        return running;
    const repoRoot = path.resolve(sourceDir, "../..");
    const launcher = path.join(repoRoot, "bin", "cleanroom.cjs");
    return fs.existsSync(path.join(repoRoot, "out", "cli", "current.json")) && fs.existsSync(launcher) ? launcher : null;
}

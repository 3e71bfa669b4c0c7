import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {cliCommand, cliEntry} from "../../../src/cli/spawnCli.js";
import {repoRoot} from "../../helpers/testModel.js";

type Esbuild = typeof import("esbuild"); // eslint-disable-line @typescript-eslint/consistent-type-imports -- a dynamic, optional import

export type CliLauncher = {
    /** How the CLI runs: "bundle" (the same sources compiled once with esbuild) or "tsx" (compiled in each process). */
    mode: "bundle" | "tsx",
    command: (args: string[], nodeOptions?: string[]) => {command: string, args: string[]},
    dispose: () => void
};

/**
 * The CLI compiled once into one ESM file (packages left external, resolved from the repository's
 * node_modules through a symlink), so that tests spawning it dozens of times pay Node's startup,
 * not a TypeScript compile per process. Same sources as `cliCommand`; falls back to it (tsx) when
 * esbuild is not available.
 */
export async function bundledCli(): Promise<CliLauncher> {
    let esbuild: Esbuild;
    try {
        esbuild = await import("esbuild");
    } catch {
        return {mode: "tsx", command: (args, nodeOptions = []) => withNodeOptions(cliCommand(args), nodeOptions), dispose: () => undefined};
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-cli-bundle-"));
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "dir");
    const outfile = path.join(dir, "cleanroom-cli.mjs");
    await esbuild.build({
        entryPoints: [cliEntry], outfile, bundle: true, platform: "node", format: "esm", target: "node20",
        packages: "external", logLevel: "error", sourcemap: false
    });
    return {
        mode: "bundle",
        command: (args, nodeOptions = []) => ({command: process.execPath, args: [...nodeOptions, outfile, ...args]}),
        dispose: () => fs.rmSync(dir, {recursive: true, force: true})
    };
}

function withNodeOptions(command: {command: string, args: string[]}, nodeOptions: string[]) {
    return {command: command.command, args: [...nodeOptions, ...command.args]};
}

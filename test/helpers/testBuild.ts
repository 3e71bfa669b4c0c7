import path from "node:path";
import {fileURLToPath} from "node:url";
import {freshCliBundle} from "../../bin/cliBundle.mjs";
import type {CliCommandOptions} from "../../src/cli/cliCommand.js";
import {testBundle, type TestScript} from "../setup/testBundle.js";

const helpersDir = path.dirname(fileURLToPath(import.meta.url));
const typeScriptPreload = /\.preload\.ts$/;

/** Whether `nodeArgs` preload a test/helpers/*.preload.ts. */
export function preloadsTypeScript(nodeArgs: string[]): boolean {
    return nodeArgs.some((arg) => typeScriptPreload.test(arg));
}

/**
 * Node's arguments that run the test build's entry `entry` (`main` the CLI, `web` web mode, `start`
 * `npm start`; test/setup/testBundle.ts) with `nodeArgs`, each test/helpers/*.preload.ts among them
 * replaced by its compiled form beside that entry: the preload imports the build's own chunks, so it
 * patches the very classes the entry uses, and no process (nor node-llama-cpp's binding check, forked
 * with the same execArgv) loads tsx.
 */
export async function testBuildCommand(entry: "main" | "web" | "start", nodeArgs: string[]): Promise<{nodeArgs: string[], entry: string}> {
    const buildDir = path.dirname(await freshCliBundle({variant: testBundle}));
    const compiled = (file: string) => {
        const name = path.basename(file, ".ts");
        if (testBundle.extraEntries[name] == null)
            throw new Error(`${file} is not compiled into the test build: only test/helpers/*.preload.ts are (test/setup/testBundle.ts)`);
        return path.join(buildDir, `${name}.mjs`);
    };
    return {nodeArgs: nodeArgs.map((arg) => typeScriptPreload.test(arg) ? compiled(arg) : arg), entry: path.join(buildDir, `${entry}.mjs`)};
}

/**
 * Options for cliCommand (runCliCapturing, startServe) that run the test build's CLI with these preloads of test/helpers
 * (`holdScrub.preload.ts`) `--import`ed, after cliLauncher.preload.ts, which lets that CLI start its children as users run them.
 */
export async function cliWithPreloads(...preloads: string[]): Promise<CliCommandOptions> {
    return await testBuildCommand("main", ["cliLauncher.preload.ts", ...preloads].flatMap((preload) => ["--import", path.join(helpersDir, preload)]));
}

/** The compiled form, in the test build, of a script the tests start as a process or preload (`testScripts` in test/setup/testBundle.ts): run it with plain node. */
export async function testBuildScript(name: TestScript): Promise<string> {
    return path.join(path.dirname(await freshCliBundle({variant: testBundle})), `${name}.mjs`);
}

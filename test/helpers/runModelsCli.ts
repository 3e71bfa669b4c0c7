import {Command} from "commander";
import {registerModelsCommand} from "../../src/cli/commands/models.js";

/** Runs `cleanroom models ...` in-process and returns what it printed and its exit code. */
export async function runModelsCli(...args: string[]) {
    let stdout = "";
    let stderr = "";
    const program = new Command().exitOverride();
    registerModelsCommand(program, {stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), interactive: false, onInterrupt: () => () => undefined});
    process.exitCode = undefined;
    await program.parseAsync(["node", "cleanroom", "models", ...args]);
    const exitCode = process.exitCode ?? 0;
    process.exitCode = undefined;
    return {stdout, stderr, exitCode, json: () => JSON.parse(stdout), jsonError: () => JSON.parse(stderr) as {error: {code: string, message: string}}};
}

import {Command, CommanderError} from "commander";
import {CleanroomError} from "../core/common/errors.js";
import {relaunchWithCoreThreadpool} from "../core/node/engine/relaunchWithCoreThreadpool.js";
import {traceStartup} from "../core/node/startupTrace.js";
import {reportError} from "./output.js";
import {reportStrayErrors} from "./reportStrayErrors.js";

export type CliProgramOptions = {
    name: string,
    description: string,
    /** Adds the commands to the program. */
    register: (program: Command) => void,
    /** Commands that decode with the local model in this process: they need the core's thread pool (see relaunchWithCoreThreadpool). */
    decodingCommands: string[]
};

/**
 * Parses `process.argv` with the commands `register` adds and runs the one asked for. Usage
 * errors and errors thrown before a command ran are reported like any other (as JSON with --json).
 */
export async function runCliProgram({name, description, register, decodingCommands}: CliProgramOptions) {
    traceStartup("CLI loaded");
    // Flags are parsed before a command knows about its --json, so a usage error looks here.
    const cliArgs = process.argv.slice(2);
    const json = cliArgs.includes("--json");
    reportStrayErrors(json);
    const program = new Command()
        .name(name)
        .description(description)
        .showHelpAfterError()
        // Usage errors come back here (inherited by every subcommand) instead of ending the process,
        // so that with --json they are reported as JSON like any other error.
        .exitOverride()
        .configureOutput(json ? {outputError: () => undefined, writeErr: () => undefined} : {});
    register(program);

    if (decodingCommands.includes(cliArgs.find((arg) => !arg.startsWith("-")) ?? "") && !cliArgs.includes("--help") && !cliArgs.includes("-h"))
        await relaunchWithCoreThreadpool();

    try {
        await program.parseAsync(process.argv);
    } catch (error) {
        if (!(error instanceof CommanderError))
            reportError(error, json); // a value the core would refuse (InvalidOptionError), before any command ran
        else if (error.exitCode !== 0 && json)
            reportError(new CleanroomError("INVALID_INPUT", error.message.replace(/^error: /, ""), {usage: error.code}), true);
        else
            process.exitCode = error.exitCode; // already printed by commander; 0 after --help
    }
}

import type {Command} from "commander";
import {CleanroomError} from "../../core/common/errors.js";
import {printJson, reportError} from "../output.js";

type WipeCliOptions = {db?: string, modelsDir?: string, models?: boolean, yes?: boolean, json?: boolean};

/** `cleanroom wipe`: delete everything the store holds, then show what was checked. Needs no passphrase: it removes files. */
export function registerWipeCommand(program: Command) {
    program.command("wipe")
        .description("Delete everything: conversations, audit, fingerprints, canary hashes, settings, key files and registered-model records " +
            "(model files only with --models), then show each path checked")
        .option("--db <file>", "SQLite database (default: the app's data folder)")
        .option("--models-dir <folder>", "models folder whose records go (default: the app's)")
        .option("--models", "also delete the model files downloaded into the models folder")
        .option("--yes", "confirm: nothing is deleted without it")
        .option("--json", "JSON output")
        .action(async (options: WipeCliOptions) => {
            const json = options.json === true;
            try {
                if (options.yes !== true)
                    throw new CleanroomError("INVALID_INPUT", "wipe deletes every conversation and setting for good: add --yes to confirm.", {option: "--yes"});
                const [{wipeStore}, {defaultDatabasePath, defaultModelsDir}] = await Promise.all([
                    import("../../core/node/database/wipeStore.js"), import("../../core/node/paths/appPaths.js")
                ]);
                const report = wipeStore({
                    database: options.db ?? defaultDatabasePath(),
                    modelsDir: options.modelsDir ?? defaultModelsDir(),
                    removeModelFiles: options.models === true
                });
                if (json)
                    printJson(report);
                else {
                    for (const check of report.checks)
                        process.stdout.write(`${check.remains ? "REMAINS" : check.removed ? "removed" : "absent "}  ${check.path}  (${check.what})\n`);
                    process.stdout.write(report.clean
                        ? `Checked ${report.checks.length} paths: nothing remains.` : "Something remains: see REMAINS above.");
                    process.stdout.write(report.modelFilesKept > 0 ? ` ${report.modelFilesKept} model file(s) kept (--models deletes them).\n` : "\n");
                }
                if (!report.clean)
                    process.exitCode = 1;
            } catch (error) {
                reportError(error, json);
            }
        });
}

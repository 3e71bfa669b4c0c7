import type {Command} from "commander";
import {passphraseMinimumLength as minimumLength} from "../../core/common/api/limits.js";
import {CleanroomError} from "../../core/common/errors.js";
import {realDatabasePath} from "../../core/node/database/realDatabasePath.js";
import {printJson, reportError, reportWarning} from "../output.js";

type PassphraseCliOptions = {db?: string, json?: boolean};

/**
 * `cleanroom passphrase set|remove`: protects the database with a passphrase (scrypt-derived key,
 * never stored), changes it, or removes it (back to a key file). The current passphrase comes from
 * CLEANROOM_PASSPHRASE or the terminal, the new one from CLEANROOM_NEW_PASSPHRASE or the terminal (twice).
 * Refused (DATABASE_IN_USE, exit 1, nothing changed) while another Cleanroom process has the database open.
 */
export function registerPassphraseCommand(program: Command) {
    const passphrase = program.command("passphrase").description("Set, change or remove the database's passphrase (re-keys it atomically)");
    passphrase.command("set")
        .description("set or change the passphrase (new one: $CLEANROOM_NEW_PASSPHRASE, else asked twice on the terminal)")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: PassphraseCliOptions) => rekey(options, "set"));
    passphrase.command("remove")
        .description("remove the passphrase: the database stays encrypted, its key kept in a key file beside it (mode 0600)")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: PassphraseCliOptions) => rekey(options, "remove"));
}

async function rekey(options: PassphraseCliOptions, action: "set" | "remove") {
    const json = options.json === true;
    try {
        const [{rekeyDatabase}, {terminalStoreKey}, {promptPassphrase}, {openDatabase}, {defaultDatabasePath}, {DatabaseLock}] = await Promise.all([
            import("../../core/node/database/keys/rekeyDatabase.js"), import("../../core/node/host/terminalStoreKey.js"),
            import("../../core/node/host/promptPassphrase.js"), import("../../core/node/database/openDatabase.js"), import("../../core/node/paths/appPaths.js"),
            import("../../core/node/database/lock/DatabaseLock.js")
        ]);
        const database = realDatabasePath(options.db ?? defaultDatabasePath());
        // The database to this command alone from the start (no prompt for nothing): refused with DATABASE_IN_USE while another process has it open.
        await DatabaseLock.of(database).exclusivelyAsync(action === "set" ? "set the passphrase of" : "remove the passphrase of", async () => {
            const current = await terminalStoreKey(database, (warning) => reportWarning(warning, json));
            // Opened once as any command does: created or migrated first, and its schema brought up to date.
            openDatabase(database, {key: current}).close();
            let next: string | undefined;
            if (action === "set") {
                next = process.env.CLEANROOM_NEW_PASSPHRASE ?? undefined;
                if (next == null || next === "") {
                    next = await promptPassphrase("New passphrase: ") ?? undefined;
                    if (next != null && await promptPassphrase("The new passphrase again: ") !== next)
                        throw new CleanroomError("INVALID_INPUT", "The two new passphrases differ: nothing was changed.");
                }
                if (next == null || next === "")
                    throw new CleanroomError("INVALID_INPUT", "No new passphrase: set CLEANROOM_NEW_PASSPHRASE, or run this in a terminal to be asked for it.");
                if ([...next].length < minimumLength)
                    throw new CleanroomError("INVALID_INPUT", `A passphrase has at least ${minimumLength} characters: nothing was changed.`, {minimumLength});
            }
            const envelope = rekeyDatabase(database, current, next != null ? {passphrase: next} : {});
            if (json)
                printJson({database, mode: envelope.mode});
            else
                process.stdout.write(envelope.mode === "passphrase"
                    ? `The passphrase of ${database} is set: it is asked for (or read from CLEANROOM_PASSPHRASE) at every start.\n`
                    : `The passphrase of ${database} is removed: it stays encrypted, its key in ${database}-key.json.\n`);
        });
    } catch (error) {
        reportError(error, json);
    }
}

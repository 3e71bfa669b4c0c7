import type {Command} from "commander";
import {defaultResumeSnapshotMaxMiB, ResumeSnapshotMaxMiBSchema} from "../../core/common/api/limits.js";
import {CleanroomError} from "../../core/common/errors.js";
import {numberOption} from "../optionParsers.js";
import {printJson} from "../output.js";
import {withDatabase, type DatabaseCliOptions} from "../withDatabase.js";

type ResumeOptions = DatabaseCliOptions & {maxMib?: number};

/**
 * `cleanroom settings resume-snapshots [on|off] [--max-mib <n>]`: whether a conversation's
 * context is saved (sealed in the database) when it ends, so that its next turn resumes at once,
 * and the largest state saved. With neither, shows both. The app's Settings hold the same two.
 */
export function registerResumeSettingsCommand(settings: Command) {
    settings.command("resume-snapshots").description("resume snapshots: show, turn on or off, or cap their size")
        .argument("[state]", "on or off")
        .option("--max-mib <n>", `the largest snapshot saved, in MiB (default ${defaultResumeSnapshotMaxMiB}); a larger context is evaluated again instead`,
            numberOption("--max-mib", ResumeSnapshotMaxMiBSchema))
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((state: string | undefined, options: ResumeOptions) => withDatabase(options, async (db) => {
            if (state != null && state !== "on" && state !== "off")
                throw new CleanroomError("INVALID_INPUT", `resume-snapshots takes on or off, not "${state.slice(0, 20)}".`, {option: "state"});
            const [{SettingsStore}, {settingKeys}] = await Promise.all([
                import("../../core/node/settings/SettingsStore.js"), import("../../core/node/settings/settingKeys.js")
            ]);
            const store = new SettingsStore(db);
            if (state != null)
                store.set(settingKeys.app.resumeSnapshots, state === "on");
            if (options.maxMib != null)
                store.set(settingKeys.app.resumeSnapshotMaxMiB, options.maxMib);
            const current = {
                resumeSnapshots: store.get<boolean>(settingKeys.app.resumeSnapshots) ?? true,
                resumeSnapshotMaxMiB: store.get<number>(settingKeys.app.resumeSnapshotMaxMiB) ?? defaultResumeSnapshotMaxMiB
            };
            if (options.json === true)
                printJson(current);
            else
                process.stdout.write(`Resume snapshots: ${current.resumeSnapshots ? "on" : "off"}, at most ${current.resumeSnapshotMaxMiB} MiB each.\n`);
        }));
}

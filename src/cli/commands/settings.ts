import type {Command} from "commander";
import {NeverSendPhraseSchema} from "../../core/common/api/limits.js";
import {CleanroomError} from "../../core/common/errors.js";
import {addNeverSendPhrase, removeNeverSendPhrase} from "../../core/common/secretScan/neverSendList.js";
import type {CloudSettingsStore} from "../../core/node/settings/CloudSettingsStore.js";
import {textOption} from "../optionParsers.js";
import {printJson} from "../output.js";
import {withDatabase, type DatabaseCliOptions} from "../withDatabase.js";
import {registerResumeSettingsCommand} from "./settingsResume.js";
import {registerEmbeddingModelCommands} from "./settingsEmbeddingModel.js";

const phraseArgument = textOption("phrase", NeverSendPhraseSchema, {private: true});
const whatTheListDoes = "A cloud request holding one of them (any case) is stopped before it is sent.";

/**
 * `cleanroom settings never-send list|add <phrase>|remove <phrase>`: the "Never send these" list
 * of Settings (`cloud.neverSend`), in the same database. A phrase is matched as the scan reads it:
 * any case, any spacing between its words. Errors never repeat a phrase, only what was wrong.
 */
export function registerSettingsCommand(program: Command) {
    const settings = program.command("settings").description("Settings kept in the database");
    registerResumeSettingsCommand(settings);
    const neverSend = settings.command("never-send").description("The \"Never send these\" words and phrases: cloud requests holding one are stopped");

    neverSend.command("list").description("show the list")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: DatabaseCliOptions) => withCloudSettings(options, (cloud) => {
            const list = cloud.get().neverSend;
            if (options.json === true)
                printJson({neverSend: list});
            else
                process.stdout.write(list.length === 0
                    ? "The Never send list is empty.\n"
                    : `Never send these (${countOf(list)}). ${whatTheListDoes}\n${list.map((phrase) => `  ${phrase}\n`).join("")}`);
        }));

    neverSend.command("add").description("add a word or phrase (nothing changes when it is there already, in any case)")
        .argument("<phrase>", "a word or phrase (quote a phrase of several words)", phraseArgument)
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((phrase: string, options: DatabaseCliOptions) => withCloudSettings(options, (cloud) => {
            const {list, added} = addNeverSendPhrase(cloud.get().neverSend, phrase);
            if (added)
                cloud.set({neverSend: list});
            if (options.json === true)
                printJson({added, neverSend: list});
            else
                process.stdout.write(added
                    ? `Added: the Never send list has ${countOf(list)}. ${whatTheListDoes}\n`
                    : `Already in the Never send list (${countOf(list)}): nothing changed.\n`);
        }));

    neverSend.command("remove").description("remove a word or phrase (in any case); exits 1 when it is not in the list")
        .argument("<phrase>", "the word or phrase to remove (any case)", phraseArgument)
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((phrase: string, options: DatabaseCliOptions) => withCloudSettings(options, (cloud) => {
            const before = cloud.get().neverSend;
            const {list, removed} = removeNeverSendPhrase(before, phrase);
            if (!removed)
                throw new CleanroomError("INVALID_INPUT",
                    `That phrase is not in the Never send list (${countOf(before)}): nothing changed. See them with \`cleanroom settings never-send list\`.`);
            cloud.set({neverSend: list});
            if (options.json === true)
                printJson({removed, neverSend: list});
            else
                process.stdout.write(`Removed: the Never send list has ${countOf(list)}.\n`);
        }));

    registerEmbeddingModelCommands(settings);
}

function countOf(list: readonly string[]) {
    return list.length === 1 ? "1 phrase" : `${list.length} phrases`;
}

/** The cloud settings of the database (SQLite is loaded only now, so that `--help` never loads it). */
async function withCloudSettings(options: DatabaseCliOptions, work: (cloud: CloudSettingsStore) => void) {
    await withDatabase(options, async (db) => {
        const [{SettingsStore}, {CloudSettingsStore}, {AuditLog}] = await Promise.all([
            import("../../core/node/settings/SettingsStore.js"), import("../../core/node/settings/CloudSettingsStore.js"), import("../../core/node/audit/AuditLog.js")
        ]);
        work(new CloudSettingsStore(new SettingsStore(db), new AuditLog(db)));
    });
}

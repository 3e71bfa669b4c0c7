import type {Command} from "commander";
import type * as Choosing from "../../core/node/documents/embedding/chooseEmbeddingModel.js";
import type {SettingsStore} from "../../core/node/settings/SettingsStore.js";
import {printJson} from "../output.js";
import {withDatabase, type DatabaseCliOptions} from "../withDatabase.js";

const whatItDoes = "Retrieval from large documents then ranks passages by meaning as well as by their words.";

/**
 * `cleanroom settings embedding-model show|set <gguf>|clear`: the local embedding model that
 * documents too large to go in whole are embedded with (#23). None: BM25 alone.
 */
export function registerEmbeddingModelCommands(settings: Command) {
    const embeddingModel = settings.command("embedding-model")
        .description("The local embedding model for documents: retrieval fuses word matches (BM25) with its vectors; none, word matches alone");

    embeddingModel.command("show").description("show the embedding model chosen, if any")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: DatabaseCliOptions) => withSettings(options, (store, {chosenEmbeddingModel}) => {
            const chosen = chosenEmbeddingModel(store);
            if (options.json === true)
                printJson({embeddingModel: chosen});
            else
                process.stdout.write(chosen == null
                    ? "No embedding model: passages are retrieved by their words (BM25) alone.\n"
                    : `Embedding model: ${chosen}\n${whatItDoes}\n`);
        }));

    embeddingModel.command("set").description("choose a GGUF embedding model (for example the catalog's bge-small-en-v1.5-q8_0)")
        .argument("<gguf>", "path of the GGUF file")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((gguf: string, options: DatabaseCliOptions) => withSettings(options, (store, {chooseEmbeddingModel}) => {
            const chosen = chooseEmbeddingModel(store, gguf);
            if (options.json === true)
                printJson({embeddingModel: chosen});
            else
                process.stdout.write(`Embedding model: ${chosen}\n${whatItDoes} Documents attached from now on are embedded; earlier ones keep word matches alone.\n`);
        }));

    embeddingModel.command("clear").description("use no embedding model: passages are retrieved by their words alone")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: DatabaseCliOptions) => withSettings(options, (store, {chooseEmbeddingModel}) => {
            chooseEmbeddingModel(store, null);
            if (options.json === true)
                printJson({embeddingModel: null});
            else
                process.stdout.write("No embedding model: passages are retrieved by their words (BM25) alone. Stored vectors stay with their documents.\n");
        }));
}

/** The database's settings (SQLite is loaded only now, so that `--help` never loads it). */
async function withSettings(options: DatabaseCliOptions, work: (settings: SettingsStore, choosing: typeof Choosing) => void) {
    await withDatabase(options, async (db) => {
        const [{SettingsStore}, choosing] = await Promise.all([
            import("../../core/node/settings/SettingsStore.js"), import("../../core/node/documents/embedding/chooseEmbeddingModel.js")
        ]);
        work(new SettingsStore(db), choosing);
    });
}

import type {Command} from "commander";
import {reportError} from "../output.js";
import type {ModelsActions} from "./modelsActions.js";

export type ModelsCommandIo = {
    stdout: (text: string) => void,
    stderr: (text: string) => void,
    /** Draw a live progress bar (else one line per 10 %). Defaults to whether stderr is a terminal. */
    interactive: boolean,
    /** Called instead of ending the process on Ctrl-C, for tests. Defaults to hooking SIGINT. */
    onInterrupt?: (abort: () => void) => () => void
};

const defaultIo: ModelsCommandIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    interactive: process.stderr.isTTY === true
};

export type JsonOption = {json?: boolean};
export type DownloadOptions = JsonOption & {sha256?: string, dir?: string, keepPartial?: boolean, allowLoopback?: boolean};

/**
 * `cleanroom models list | download | import | detect | default | remove`. The registry and
 * default downloads live in the app's models folder (`$CLEANROOM_HOME/models` when set).
 */
export function registerModelsCommand(program: Command, io: ModelsCommandIo = defaultIo): void {
    const models = program.command("models").description("Recommended models, downloads, imports and models of other apps");

    models.command("list")
        .description("Registered models and the catalog, with whether each fits this machine")
        .option("--json", "print JSON")
        .action((options: JsonOption) => run(io, options, (actions) => actions.list(io, options)));

    models.command("download")
        .description("Download a catalog model or a GGUF URL, verified before it is used")
        .argument("<model>", "catalog id or https:// / hf: URL")
        .option("--sha256 <hex>", "expected SHA-256 of the file (for URLs)")
        .option("--dir <folder>", "folder to save the file in (default: the models folder)")
        .option("--keep-partial", "if the disk fills, keep what arrived to resume later (default: delete it)")
        .option("--allow-loopback", "also download from this machine (127.0.0.1, ::1, localhost), over http too: tests and local mirrors")
        .option("--json", "print JSON")
        .action((model: string, options: DownloadOptions) => run(io, options, (actions) => actions.download(io, model, options)));

    models.command("import")
        .description("Use a GGUF file from anywhere on disk, in place (validated, not copied)")
        .argument("<file>", "path of a .gguf file")
        .option("--name <name>", "display name")
        .option("--json", "print JSON")
        .action((file: string, options: JsonOption & {name?: string}) => run(io, options, (actions) => actions.import(io, file, options)));

    models.command("detect")
        .description("Find models that LM Studio, Ollama, Jan and GPT4All already downloaded")
        .option("--home <folder>", "home folder to search (default: yours)")
        .option("--add", "register the models found (used in place, validated first)")
        .option("--json", "print JSON")
        .action((options: JsonOption & {home?: string, add?: boolean}) => run(io, options, (actions) => actions.detect(io, options)));

    models.command("default")
        .description("Show or set the model that chat and the app use")
        .argument("[model]", "registered id, catalog id, or path of a .gguf file")
        .option("--json", "print JSON")
        .action((model: string | undefined, options: JsonOption) => run(io, options, (actions) => actions.default(io, model, options)));

    models.command("remove")
        .description("Forget a registered model (the file is left where it is)")
        .argument("<id>", "registered id")
        .option("--json", "print JSON")
        .action((id: string, options: JsonOption) => run(io, options, (actions) => actions.remove(io, id, options)));
}

/** Runs one subcommand; its code (the registry, downloads, llama.cpp) is loaded only now, so that `--help` loads none of it. */
async function run(io: ModelsCommandIo, options: JsonOption, work: (actions: ModelsActions) => Promise<void>) {
    try {
        await work((await import("./modelsActions.js")).modelsActions);
    } catch (error) {
        reportError(error, options.json === true, io.stderr);
    }
}

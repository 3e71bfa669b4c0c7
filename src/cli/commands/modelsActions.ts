import fs from "node:fs";
import path from "node:path";
import {CleanroomError} from "../../core/common/errors.js";
import type {DownloadProgress, ModelFit} from "../../core/common/models.js";
import {defaultModelsDir} from "../../core/node/paths/appPaths.js";
import {ModelLibrary, type ModelLibraryOptions} from "../../core/node/models/ModelLibrary.js";
import {formatBytes} from "../../core/common/formatBytes.js";
import {formatDuration} from "../formatDuration.js";
import {formatTable} from "../formatTable.js";
import {missingModelRemedies, missingWhat} from "../MissingModelFileError.js";
import {renderProgressBar} from "../renderProgressBar.js";
import type {DownloadOptions, JsonOption, ModelsCommandIo} from "./models.js";

/** The models folder's library, as the app's core has it; the CLI runs its downloads in the foreground. */
function openLibrary(options: Omit<ModelLibraryOptions, "dir"> = {}) {
    return new ModelLibrary({dir: defaultModelsDir(), ...options}, () => undefined);
}

async function listModels(io: ModelsCommandIo, options: JsonOption) {
    const {modelsDir, defaultModelId: defaultId, installed, catalog: catalogRows} = await openLibrary().list(null);

    if (options.json === true) {
        io.stdout(JSON.stringify({modelsDir, defaultModel: defaultId, installed, catalog: catalogRows}, null, 2) + "\n");
        return;
    }
    io.stdout(`Models folder: ${modelsDir}\n\nInstalled (* the default):\n`);
    if (installed.length === 0)
        io.stdout("  (none: download one below, or try `models detect`)\n");
    else
        io.stdout(formatTable(
            [{header: " "}, {header: "ID"}, {header: "SIZE", align: "right"}, {header: "ORIGIN"}, {header: "FITS THIS MACHINE"}, {header: "PATH"}],
            installed.map((model) => [
                model.id === defaultId ? "*" : "", model.id, formatBytes(model.fileBytes), model.origin,
                model.missing != null ? "MISSING: file not found" : summariseFit(model.fit, model.problem), model.path
            ]),
            {indent: "  "}
        ));
    for (const model of installed)
        if (model.missing != null)
            io.stdout(`\n  ${model.id}: ${missingWhat(model.missing)}. To use it again:\n` +
                missingModelRemedies(model, model.missing).map((remedy) => `    - ${remedy}\n`).join(""));
    io.stdout("\nCatalog (download with `models download <id>`):\n");
    io.stdout(formatTable(
        [{header: "ID"}, {header: "MODEL"}, {header: "QUANT"}, {header: "SIZE", align: "right"}, {header: "LICENSE"},
            {header: "FITS THIS MACHINE"}, {header: "INSTALLED AS"}],
        catalogRows.map((entry) => [
            entry.id, entry.purpose === "embedding" ? `${entry.name}, for documents only` : entry.name, entry.quantization, formatBytes(entry.fileBytes), entry.license, summariseFit(entry.fit, null), entry.installedAs ?? ""
        ]),
        {indent: "  "}
    ));
}

/** The fit in a table cell: "yes: 5.2 MiB of 3.1 GiB RAM, context ≤ 512". */
function summariseFit(fit: ModelFit | null, problem: string | null) {
    if (fit == null)
        return `cannot run: ${problem ?? "unknown"}`;
    const ram = fit.fitsRam
        ? `yes: ${formatBytes(fit.ramNeededBytes)} of ${formatBytes(fit.ramBudgetBytes)} RAM, context ≤ ${fit.maxContextSize}`
        : `no: needs ${formatBytes(fit.ramNeededBytes)} RAM, ${formatBytes(fit.ramBudgetBytes)} usable`;
    const gpu = fit.gpu == null ? "" : fit.gpu.fitsVram ? `; VRAM: context ≤ ${fit.gpu.maxContextSize}` : "; not in VRAM";
    return `${ram}${gpu}${fit.basis === "catalog" ? " (estimate)" : ""}`;
}

function describeFit(fit: ModelFit | null, problem: string | null) {
    if (fit == null)
        return `cannot run: ${problem ?? "unknown"}`;

    const ram = fit.fitsRam
        ? `fits RAM (${formatBytes(fit.ramNeededBytes)} of ${formatBytes(fit.ramBudgetBytes)} usable), context up to ${fit.maxContextSize}`
        : `too large for this machine's RAM (${formatBytes(fit.ramNeededBytes)} needed, ${formatBytes(fit.ramBudgetBytes)} usable)`;
    const gpu = fit.gpu == null ? "" : fit.gpu.fitsVram ? `; fits VRAM, context up to ${fit.gpu.maxContextSize}` : "; does not fit VRAM";
    return `${ram}${gpu}${fit.basis === "catalog" ? " (catalog estimate)" : ""}`;
}

async function downloadCommand(io: ModelsCommandIo, ref: string, options: DownloadOptions) {
    const library = openLibrary({
        downloader: {partialOnDiskFull: options.keepPartial === true ? "keep" : "delete", fetcher: {allowLoopback: options.allowLoopback === true}}
    });
    const catalog = library.catalog();
    const entry = catalog.get(ref);
    if (entry == null && !/^(https?:\/\/|hf:)/i.test(ref))
        throw new CleanroomError("INVALID_INPUT", `"${ref}" is neither a catalog id (${catalog.entries.map((known) => known.id).join(", ")}) nor an https:// or hf: URL.`, {ref});
    const sha256 = options.sha256?.toLowerCase();
    if (sha256 != null && !/^[0-9a-f]{64}$/.test(sha256))
        throw new CleanroomError("INVALID_INPUT", "--sha256 must be 64 hex digits.", {sha256: options.sha256 ?? ""});
    if ((sha256 ?? entry?.sha256) == null && options.json !== true)
        io.stderr("Warning: no SHA-256 to check against; only the size and the GGUF header will be verified.\n");

    const controller = new AbortController();
    const release = (io.onInterrupt ?? hookSigint)(() => controller.abort());
    const bar = options.json === true ? null : createProgressBar(io);
    let downloaded;
    try {
        downloaded = await library.download(entry != null ? {catalogId: entry.id, sha256} : {url: ref, sha256}, {
            dir: options.dir, signal: controller.signal, onProgress: bar ?? undefined
        });
    } finally {
        release();
        if (bar != null)
            bar.finish();
    }
    const {model, download: result} = downloaded;
    const registry = library.registry;
    const madeDefault = registry.defaultModel() == null;
    if (madeDefault)
        registry.setDefault(model.id);

    if (options.json === true) {
        io.stdout(JSON.stringify({model, download: result, isDefault: madeDefault || registry.defaultModel()?.id === model.id}, null, 2) + "\n");
        return;
    }
    const speed = result.transferSeconds > 0 ? result.transferredBytes / result.transferSeconds : 0;
    io.stdout(
        (result.alreadyPresent ? `Already downloaded and verified: ${result.path}\n` : `Downloaded ${formatBytes(result.fileBytes)} to ${result.path}` +
            (result.transferredBytes > 0 ? ` (${formatBytes(speed)}/s${result.resumedFromBytes > 0 ? `, resumed after ${formatBytes(result.resumedFromBytes)}` : ""})` : "") + "\n") +
        `SHA-256 ${result.sha256}${result.sha256Checked ? " (matches)" : " (not checked: none given)"}\n` +
        `Registered as ${model.id}${madeDefault ? " and set as the default model" : ""}.\n`
    );
}

async function importCommand(io: ModelsCommandIo, file: string, options: JsonOption & {name?: string}) {
    const library = openLibrary();
    const model = await library.importFile(path.resolve(file), options.name);
    const madeDefault = library.registry.defaultModel() == null;
    if (madeDefault)
        library.registry.setDefault(model.id);
    const {fit, problem} = await library.installedModel(model);
    if (options.json === true) {
        io.stdout(JSON.stringify({model, fit, isDefault: madeDefault || library.registry.defaultModel()?.id === model.id}, null, 2) + "\n");
        return;
    }
    io.stdout(`Imported ${model.path} as ${model.id} (used in place, not copied)${madeDefault ? "; it is now the default model" : ""}.\n` +
        `${describeFit(fit, problem)}\n`);
}

async function detectCommand(io: ModelsCommandIo, options: JsonOption & {home?: string, add?: boolean}) {
    const {added, rejected, ...result} = await openLibrary(options.home != null ? {appsHome: path.resolve(options.home)} : {}).detect({add: options.add === true});

    if (options.json === true) {
        io.stdout(JSON.stringify({...result, ...(options.add === true ? {added, rejected} : {})}, null, 2) + "\n");
        return;
    }
    if (result.models.length === 0)
        io.stdout(`No models found in ${result.searched.filter((dir) => dir.exists).length} existing app folders ` +
            `(of ${result.searched.length} searched).\n`);
    if (result.models.length > 0)
        io.stdout(formatTable(
            [{header: "APP"}, {header: "NAMES"}, {header: "SIZE", align: "right"}, {header: "PATH"}],
            result.models.map((found) => [found.app, found.names.join(", "), formatBytes(found.fileBytes), found.path])
        ));
    for (const skip of result.skipped)
        io.stdout(`skipped  ${skip.path}: ${skip.reason}\n`);
    if (options.add === true)
        io.stdout(`Registered ${added.length} (used in place)${rejected.length > 0 ? `; ${rejected.length} refused:` : "."}\n` +
            rejected.map((reject) => `  ${reject.path}: ${reject.error.message}\n`).join(""));
    else if (result.models.length > 0)
        io.stdout("Use one with `models import <path>` or `models default <path>`, or register all with `models detect --add`.\n");
}

async function defaultCommand(io: ModelsCommandIo, ref: string | undefined, options: JsonOption) {
    const library = openLibrary();
    const registry = library.registry;
    if (ref == null) {
        const current = registry.defaultModel();
        if (options.json === true)
            io.stdout(JSON.stringify({defaultModel: current}, null, 2) + "\n");
        else
            io.stdout(current == null ? "No default model is set.\n" : `${current.id}  ${current.path}\n`);
        return;
    }

    let model = registry.resolve(ref);
    if (model == null) {
        if (library.catalog().get(ref) != null)
            throw new CleanroomError("MODEL_NOT_FOUND", `Catalog model ${ref} is not downloaded yet: run \`models download ${ref}\` first.`, {ref});
        if (!fs.existsSync(ref))
            throw new CleanroomError("MODEL_NOT_FOUND", `"${ref}" is not a registered model, a catalog id or an existing file.`, {ref});
        model = await library.importFile(path.resolve(ref));
    }
    registry.setDefault(model.id);
    if (options.json === true)
        io.stdout(JSON.stringify({defaultModel: model}, null, 2) + "\n");
    else
        io.stdout(`Default model: ${model.id}  ${model.path}\n`);
}

async function removeCommand(io: ModelsCommandIo, id: string, options: JsonOption) {
    if (!openLibrary().registry.remove(id))
        throw new CleanroomError("MODEL_NOT_FOUND", `No registered model "${id}".`, {id});
    io.stdout(options.json === true ? JSON.stringify({removed: id}) + "\n" : `Forgot ${id} (its file was left in place).\n`);
}

function hookSigint(abort: () => void) {
    const listener = () => abort();
    process.once("SIGINT", listener);
    return () => void process.off("SIGINT", listener);
}

function createProgressBar(io: ModelsCommandIo) {
    let lastTenth = -1;
    let drawn = false;
    const report = (progress: DownloadProgress) => {
        const fraction = progress.totalBytes > 0 ? Math.min(1, progress.downloadedBytes / progress.totalBytes) : 0;
        const label = progress.phase === "verifying" ? "Verifying" : "Downloading";
        // A server that does not say the size gets no bar, only the bytes so far.
        const amount = progress.totalBytes > 0
            ? `${renderProgressBar(fraction)}  ${formatBytes(progress.downloadedBytes)} / ${formatBytes(progress.totalBytes)}`
            : `${formatBytes(progress.downloadedBytes)} (size not given by the server)`;
        const line = `${label} ${amount}` +
            (progress.phase === "downloading" ? `  ${formatBytes(progress.bytesPerSecond)}/s` +
                (progress.etaSeconds != null ? `  ETA ${formatDuration(progress.etaSeconds)}` : "") : "");
        if (io.interactive) {
            io.stderr(`\r${line.padEnd(100)}`);
            drawn = true;
        } else {
            const tenth = Math.floor(fraction * 10) + (progress.phase === "verifying" ? 100 : 0);
            if (tenth !== lastTenth) {
                lastTenth = tenth;
                io.stderr(line + "\n");
            }
        }
    };
    return Object.assign(report, {
        finish() {
            if (drawn)
                io.stderr("\n");
        }
    });
}

/** The `models` subcommands, loaded by `models.ts` when one runs. */
export const modelsActions = {
    list: listModels,
    download: downloadCommand,
    import: importCommand,
    detect: detectCommand,
    default: defaultCommand,
    remove: removeCommand
};

export type ModelsActions = typeof modelsActions;

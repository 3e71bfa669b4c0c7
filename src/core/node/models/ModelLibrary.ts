import crypto from "node:crypto";
import path from "node:path";
import type {Llama} from "node-llama-cpp";
import type {ApiParsedInput, CatalogModel, DetectedModels, DownloadProgressEvent, InstalledModel, ModelLibrary as ModelLibraryView} from "../../common/api/index.js";
import {CleanroomError, InvalidInputError, toWireError, type WireError} from "../../common/errors.js";
import type {CatalogEntry, DetectedModel, DownloadProgress, RegisteredModel} from "../../common/models.js";
import {loadLlama} from "../engine/loadLlama.js";
import {checkModelFileHead} from "../engine/checkModelFileHead.js";
import {validateModelFile} from "../engine/validateModelFile.js";
import {detectInstalledModels} from "./detectInstalledModels.js";
import {estimateCatalogFit, estimateModelFit, type ModelFitOptions} from "./estimateModelFit.js";
import {importModelFile} from "./importModelFile.js";
import {describeMissingModelFile, missingModelFile} from "./missingModelFile.js";
import {ModelCatalog} from "./ModelCatalog.js";
import {DownloadFetcher} from "./DownloadFetcher.js";
import {ModelDownloader, type ModelDownloaderOptions, type ModelDownloadResult} from "./ModelDownloader.js";
import {ModelRegistry} from "./ModelRegistry.js";
import {resolveDownloadUrl} from "./resolveDownloadUrl.js";

export type ModelLibraryOptions = {
    /** The models folder: downloads go there and `registry.json` lives there. */
    dir: string,
    /** A catalog file other than `models/catalog.json` (tests point it at a local server). */
    catalogPath?: string,
    /** Home folder searched for other apps' models. Defaults to the user's (and the environment's overrides). */
    appsHome?: string,
    /** Passed to the downloader (disk space, timeouts, progress interval). */
    downloader?: Omit<ModelDownloaderOptions, "dir">,
    /** Passed to the fit estimates (RAM and VRAM figures). */
    fit?: ModelFitOptions,
    /** Defaults to the process's shared `Llama`. */
    llama?: () => Promise<Llama>
};

/** A catalog model, or a URL with its SHA-256 when known (the `models.download` input). */
export type DownloadRequest = ApiParsedInput<"models.download">;

export type ForegroundDownloadOptions = {
    /** The folder the file goes to. Defaults to the models folder. */
    dir?: string,
    signal?: AbortSignal,
    onProgress?: (progress: DownloadProgress) => void
};

type ActiveDownload = {controller: AbortController, latest: DownloadProgressEvent};

/**
 * Model management, for the core's service and the CLI's `models` command alike: the registry
 * and catalog of the models folder, downloads (in the background with progress events for the
 * app, in the foreground for the CLI), imports, detection of other apps' models, and fit estimates.
 */
export class ModelLibrary {
    private readonly _options: ModelLibraryOptions;
    private readonly _onProgress: (event: DownloadProgressEvent) => void;
    private readonly _downloads = new Map<string, ActiveDownload>();
    /** The downloads' URL policy, for refusing what it can at once (the download checks again, resolved, hop by hop). */
    private readonly _fetcher: DownloadFetcher;
    private _catalog: ModelCatalog | null = null;
    private _registry: ModelRegistry | null = null;

    public constructor(options: ModelLibraryOptions, onProgress: (event: DownloadProgressEvent) => void) {
        this._options = options;
        this._onProgress = onProgress;
        this._fetcher = new DownloadFetcher(options.downloader?.fetcher);
    }

    /** The models folder's registry, opened on first use: a damaged `registry.json` is reported to the caller, it never stops the core. */
    public get registry(): ModelRegistry {
        this._registry ??= ModelRegistry.open(this._options.dir);
        return this._registry;
    }

    /** Drops the registry read so far (its file was removed): the next use reads the folder again. */
    public forgetRegistry(): void {
        this._registry = null;
    }

    /** The catalog, read on first use: a broken catalog is reported to the caller, it never stops the core. */
    public catalog(): ModelCatalog {
        this._catalog ??= ModelCatalog.load(this._options.catalogPath);
        return this._catalog;
    }

    public async list(loadedPath: string | null): Promise<ModelLibraryView> {
        const llama = await this._llama();
        const defaultId = this.registry.defaultModel()?.id ?? null;
        const installed: InstalledModel[] = [];
        for (const model of this.registry.list())
            installed.push(await this._installedView(llama, model, defaultId, loadedPath));

        const catalog: CatalogModel[] = this.catalog().entries.map((entry) => {
            const local = installed.find((model) => model.catalogId === entry.id && model.present && model.fit != null);
            return {...entry, installedAs: local?.id ?? null, fit: local?.fit ?? estimateCatalogFit(entry, this._options.fit)};
        });
        const downloads = [...this._downloads.values()].map((download) => download.latest);
        return {modelsDir: this.registry.modelsDir, defaultModelId: defaultId, installed, catalog, downloads};
    }

    /**
     * Starts a download and returns its id at once. A download of the same file already running
     * is returned instead of a second one. Refused up front: an unknown catalog id, and a URL the
     * download policy refuses without a DNS lookup (not https, an address literal or `localhost`
     * outside the public internet: `DOWNLOAD_URL_REFUSED`); the download itself checks every
     * resolved address and redirect, catalog entries as much as URLs.
     */
    public startDownload(request: DownloadRequest): string {
        const entry: CatalogEntry | null = request.catalogId != null ? this.catalog().require(request.catalogId) : null;
        const url = entry?.url ?? request.url;
        if (url == null)
            throw new InvalidInputError("models.download", ["give either catalogId or url"]);
        this._fetcher.checkUrl(resolveDownloadUrl(url).url);

        const fileName = entry?.fileName ?? null;
        const running = [...this._downloads.values()].find((download) =>
            (fileName != null ? download.latest.fileName === fileName : download.latest.catalogId == null && download.latest.fileName === fileNameOf(url)));
        if (running != null)
            return running.latest.id;

        const id = `dl-${crypto.randomBytes(8).toString("hex")}`;
        const download: ActiveDownload = {
            controller: new AbortController(),
            latest: {
                id, catalogId: entry?.id ?? null, fileName: fileName ?? fileNameOf(url), bytes: 0, total: entry?.fileBytes ?? 0,
                bytesPerSecond: 0, state: "running", error: null, modelId: null
            }
        };
        this._downloads.set(id, download);
        this._report(download, {});
        void this._runDownload(download, request);
        return id;
    }

    /**
     * Downloads a catalog model or a URL in the foreground, verifies it (size, GGUF structure, the
     * catalog's or the given SHA-256) and registers it. A given SHA-256 that contradicts the
     * catalog's is refused before anything is fetched.
     */
    public async download(request: DownloadRequest, {dir, signal, onProgress}: ForegroundDownloadOptions = {}): Promise<{model: RegisteredModel, download: ModelDownloadResult}> {
        const entry: CatalogEntry | null = request.catalogId != null ? this.catalog().require(request.catalogId) : null;
        const url = entry?.url ?? request.url;
        if (url == null)
            throw new InvalidInputError("models.download", ["give either catalogId or url"]);
        const givenSha = request.sha256?.toLowerCase() ?? null;
        if (entry?.sha256 != null && givenSha != null && givenSha !== entry.sha256)
            throw new CleanroomError("INVALID_INPUT", `The SHA-256 given differs from the catalog's checksum for ${entry.id} (${entry.sha256}).`, {id: entry.id});

        const downloader = new ModelDownloader({
            validate: async (filePath) => void await validateModelFile(await this._llama(), filePath, {totalMemoryBytes: Number.POSITIVE_INFINITY}),
            ...this._options.downloader,
            dir: dir ?? this.registry.modelsDir
        });
        const result = await downloader.download({
            url, fileName: entry?.fileName, sha256: entry?.sha256 ?? givenSha, expectedBytes: entry?.fileBytes ?? null, signal, onProgress
        });
        const model = await importModelFile(await this._llama(), this.registry, result.path, {
            origin: "download", name: entry?.name, catalogId: entry?.id ?? null, sha256: result.sha256, sourceRef: url
        });
        return {model, download: result};
    }

    /** A registered model as `list` shows it: whether it is the default, loaded, on disk, and whether it fits this machine. */
    public async installedModel(model: RegisteredModel, loadedPath: string | null = null): Promise<InstalledModel> {
        return await this._installedView(await this._llama(), model, this.registry.defaultModel()?.id ?? null, loadedPath);
    }

    /** Stops a running download (what arrived is kept for a resume). False when there is none with that id. */
    public cancelDownload(id: string): boolean {
        const download = this._downloads.get(id);
        if (download == null)
            return false;

        download.controller.abort();
        return true;
    }

    public cancelAll() {
        for (const download of this._downloads.values())
            download.controller.abort();
    }

    /** Validates a GGUF file and registers it in place. The path must be absolute. */
    public async importFile(filePath: string, name?: string): Promise<RegisteredModel> {
        if (!path.isAbsolute(filePath))
            throw new InvalidInputError("models.import", [`"${filePath}" is not an absolute path; give the file's full path`]);

        checkModelFileHead(filePath); // before llama.cpp is loaded, which takes seconds the first time
        return await importModelFile(await this._llama(), this.registry, filePath, {name});
    }

    /** Other apps' models; with `add`, registers those found (only the ones in `paths` when given). */
    public async detect({add = false, paths}: {add?: boolean, paths?: string[]} = {}): Promise<DetectedModels> {
        const result = detectInstalledModels(this._options.appsHome != null ? {home: this._options.appsHome} : {});
        const added: RegisteredModel[] = [];
        const rejected: Array<{path: string, error: WireError}> = [];
        if (add) {
            const wanted = paths != null ? new Set(paths.map((wantedPath) => path.resolve(wantedPath))) : null;
            for (const wantedPath of wanted ?? [])
                if (!result.models.some((found) => found.path === wantedPath))
                    rejected.push({path: wantedPath, error: new CleanroomError("MODEL_NOT_FOUND",
                        `${wantedPath} is not among the models other apps downloaded; use Import for other files.`, {path: wantedPath}).toWire()});
            const llama = await this._llama();
            for (const found of result.models.filter((candidate) => wanted == null || wanted.has(candidate.path)))
                try {
                    added.push(await importModelFile(llama, this.registry, found.path, {
                        origin: found.app, name: displayNameOf(found), sourceRef: found.names.join(", ")
                    }));
                } catch (error) {
                    rejected.push({path: found.path, error: toWireError(error)});
                }
        }
        const registered = this.registry.list();
        return {
            ...result,
            models: result.models.map((found) => ({...found, registeredAs: registered.find((model) => model.path === found.path)?.id ?? null})),
            added,
            rejected
        };
    }

    private async _installedView(llama: Llama, model: RegisteredModel, defaultId: string | null, loadedPath: string | null): Promise<InstalledModel> {
        const missing = missingModelFile(model);
        const present = missing == null;
        let fit: InstalledModel["fit"] = null;
        let problem: string | null = missing != null ? describeMissingModelFile(model, missing) : null;
        if (present)
            try {
                fit = await estimateModelFit(llama, model.path, this._options.fit);
            } catch (error) {
                problem = toWireError(error).message;
            }
        return {...model, isDefault: model.id === defaultId, isLoaded: loadedPath != null && path.resolve(loadedPath) === model.path, present, missing, fit, problem};
    }

    private async _runDownload(download: ActiveDownload, request: DownloadRequest) {
        try {
            const {model, download: result} = await this.download(request, {
                signal: download.controller.signal,
                onProgress: (progress) => this._report(download, {
                    state: progress.phase === "verifying" ? "verifying" : "running",
                    bytes: progress.downloadedBytes,
                    total: progress.totalBytes,
                    bytesPerSecond: progress.phase === "verifying" ? 0 : progress.bytesPerSecond
                })
            });
            this._report(download, {state: "done", bytes: result.fileBytes, total: result.fileBytes, bytesPerSecond: 0, modelId: model.id});
        } catch (error) {
            const wire = toWireError(error);
            const received = wire.details.receivedBytes;
            this._report(download, {
                state: wire.code === "DOWNLOAD_CANCELLED" ? "cancelled" : "failed", bytesPerSecond: 0, error: wire,
                ...(typeof received === "number" ? {bytes: received} : {})
            });
        } finally {
            this._downloads.delete(download.latest.id);
        }
    }

    private _report(download: ActiveDownload, changes: Partial<DownloadProgressEvent>) {
        download.latest = {...download.latest, ...changes};
        this._onProgress(download.latest);
    }

    private _llama() {
        return (this._options.llama ?? loadLlama)();
    }
}

function fileNameOf(url: string): string {
    try {
        const last = url.startsWith("hf:") ? url.slice(3).split("#")[0]!.split("/").pop() : new URL(url).pathname.split("/").pop();
        return decodeURIComponent(last ?? "") || "model.gguf";
    } catch {
        return "model.gguf";
    }
}

/** An Ollama tag as it is (`llama3.2:1b`); a file's name without its folders and `.gguf`. */
function displayNameOf(found: DetectedModel): string {
    const name = found.names[0]!;
    return found.app === "ollama" ? name : path.basename(name).replace(/\.gguf$/i, "");
}

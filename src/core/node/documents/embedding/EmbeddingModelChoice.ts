import type {Llama} from "node-llama-cpp";
import {CleanroomError} from "../../../common/errors.js";
import {checkEmbeddingModelFile, chosenEmbeddingModel} from "./chooseEmbeddingModel.js";
import type {SettingsStore} from "../../settings/SettingsStore.js";
import {DocumentEmbedder, type DocumentEmbedderOptions} from "./DocumentEmbedder.js";

/**
 * The embedding model the user chose (`documents.embeddingModelPath`, set by `cleanroom settings
 * embedding-model set`), loaded when a turn first needs it and kept while the choice stands. No
 * choice: no embedder, and retrieval is BM25 alone.
 */
export class EmbeddingModelChoice {
    private readonly _settings: SettingsStore;
    private readonly _backend: () => {llama: Llama, threads: number} | null;
    private readonly _options: DocumentEmbedderOptions;
    private _loaded: {path: string, embedder: Promise<DocumentEmbedder>} | null = null;
    private _override: string | null = null;

    /**
     * `backend`: the backend the chat model runs on and its thread count, which the embedding
     * contexts use too (null while no chat model is loaded: then no embedder either).
     */
    public constructor(settings: SettingsStore, backend: () => {llama: Llama, threads: number} | null, options: DocumentEmbedderOptions = {}) {
        this._settings = settings;
        this._backend = backend;
        this._options = options;
    }

    /** The chosen model's path (this process's override, else the stored choice), or null. */
    public get path(): string | null {
        return this._override ?? chosenEmbeddingModel(this._settings);
    }

    /**
     * Uses `modelPath` in this process whatever the stored choice (`cleanroom serve --embedding-model`),
     * nothing stored. The file must be a readable GGUF file now (`MODEL_NOT_FOUND`, `MODEL_NOT_GGUF`).
     */
    public override(modelPath: string): string {
        this._override = checkEmbeddingModelFile(modelPath);
        return this._override;
    }

    /**
     * The embedder of the chosen model, loaded on first use; null when none is chosen or no backend
     * is up. A chosen file that cannot be loaded is an error that names the setting.
     */
    public async current(): Promise<DocumentEmbedder | null> {
        const path = this.path;
        const backend = this._backend();
        if (path == null || backend == null) {
            await this.unload();
            return null;
        }
        if (this._loaded?.path !== path) {
            await this.unload();
            const embedder = DocumentEmbedder.load(backend.llama, path, {threads: backend.threads, ...this._options});
            this._loaded = {path, embedder};
            embedder.catch(() => {
                if (this._loaded?.embedder === embedder)
                    this._loaded = null;
            });
        }
        try {
            return await this._loaded!.embedder;
        } catch (error) {
            throw new CleanroomError("MODEL_LOAD_FAILED",
                `The embedding model chosen for documents (${path}) could not be loaded: ${error instanceof Error ? error.message : String(error)} ` +
                "Choose another with `cleanroom settings embedding-model set <gguf>`, or go back to BM25 alone with `cleanroom settings embedding-model clear`.",
                {path}, {cause: error});
        }
    }

    /** Frees the loaded embedding model, if any. */
    public async unload(): Promise<void> {
        const loaded = this._loaded;
        this._loaded = null;
        await (await loaded?.embedder.catch(() => null))?.dispose();
    }
}

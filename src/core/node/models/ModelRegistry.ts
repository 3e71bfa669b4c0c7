import fs from "node:fs";
import path from "node:path";
import {CleanroomError} from "../../common/errors.js";
import {ModelRegistryFileSchema, type ModelRegistryFile, type RegisteredModel} from "../../common/models.js";
import {ensureDirectory} from "../paths/ensureDirectory.js";
import {writeFileDurably} from "../database/keys/durableFiles.js";
import {describeZodIssues} from "../../common/describeZodIssues.js";

export type NewRegisteredModel = Omit<RegisteredModel, "id" | "addedAt"> & {
    /** Defaults to a slug of `catalogId` or `name`, made unique. */
    id?: string
};

export const registryFileName = "registry.json";

/**
 * The models Cleanroom knows (downloaded, imported or found in other apps' folders, each used
 * in place) and the default one, kept in `registry.json` in the models folder. Every change
 * re-reads the file and replaces it atomically, so the CLI and the app can share it.
 */
export class ModelRegistry {
    public readonly modelsDir: string;
    public readonly path: string;

    private constructor(modelsDir: string) {
        this.modelsDir = path.resolve(modelsDir);
        this.path = path.join(this.modelsDir, registryFileName);
    }

    /** Opens the registry of a models folder (the file is created on the first change). Throws `MODEL_REGISTRY_INVALID` when it is damaged. */
    public static open(modelsDir: string): ModelRegistry {
        const registry = new ModelRegistry(modelsDir);
        registry._read();
        return registry;
    }

    public list(): RegisteredModel[] {
        return this._read().models;
    }

    public get(id: string): RegisteredModel | undefined {
        return this._read().models.find((model) => model.id === id);
    }

    /** A model by id, catalog id, or file path. */
    public resolve(ref: string): RegisteredModel | undefined {
        const models = this._read().models;
        return models.find((model) => model.id === ref) ??
            models.find((model) => model.catalogId === ref) ??
            models.find((model) => model.path === path.resolve(ref));
    }

    /** The model `chat` and the app use, or null when none is set (or its entry is gone). */
    public defaultModel(): RegisteredModel | null {
        const file = this._read();
        return file.models.find((model) => model.id === file.defaultModel) ?? null;
    }

    /** Registers a model file, used in place. A path already registered is updated, keeping its id. */
    public add(model: NewRegisteredModel): RegisteredModel {
        return this._mutate((file) => {
            const modelPath = path.resolve(model.path);
            const existingIndex = file.models.findIndex((known) => known.path === modelPath);
            if (existingIndex >= 0) {
                const existing = file.models[existingIndex]!;
                const updated: RegisteredModel = {...existing, ...model, id: existing.id, path: modelPath, addedAt: existing.addedAt};
                file.models[existingIndex] = updated;
                return updated;
            }
            const taken = new Set(file.models.map((known) => known.id));
            const base = model.id ?? slug(model.catalogId ?? model.name);
            let id = base;
            for (let counter = 2; taken.has(id); counter++)
                id = `${base}-${counter}`;
            const added: RegisteredModel = {...model, id, path: modelPath, addedAt: Date.now()};
            file.models.push(added);
            return added;
        });
    }

    /** Forgets a model (the file itself is left alone). Returns whether it was registered. */
    public remove(id: string): boolean {
        return this._mutate((file) => {
            const before = file.models.length;
            file.models = file.models.filter((model) => model.id !== id);
            if (file.defaultModel === id)
                file.defaultModel = null;
            return file.models.length !== before;
        });
    }

    public setDefault(id: string): RegisteredModel {
        return this._mutate((file) => {
            const model = file.models.find((known) => known.id === id);
            if (model == null)
                throw new CleanroomError("MODEL_NOT_FOUND", `No registered model "${id}".`, {id});
            file.defaultModel = id;
            return model;
        });
    }

    private _read(): ModelRegistryFile {
        let text: string;
        try {
            text = fs.readFileSync(this.path, "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT")
                return {version: 1, defaultModel: null, models: []};
            throw new CleanroomError("MODEL_REGISTRY_INVALID", `The model registry ${this.path} could not be read: ${(error as Error).message}`, {path: this.path});
        }
        let raw: unknown;
        try {
            raw = JSON.parse(text);
        } catch {
            throw new CleanroomError("MODEL_REGISTRY_INVALID", `The model registry ${this.path} is not valid JSON. Fix or delete it.`, {path: this.path});
        }
        const parsed = ModelRegistryFileSchema.safeParse(raw);
        if (!parsed.success)
            throw new CleanroomError("MODEL_REGISTRY_INVALID", `The model registry ${this.path} is invalid: ` +
                describeZodIssues(parsed.error.issues, {whole: "the registry"}).join("; "), {path: this.path});
        return parsed.data;
    }

    private _mutate<T>(change: (file: ModelRegistryFile) => T): T {
        const file = this._read();
        const result = change(file);
        const checked = ModelRegistryFileSchema.parse(file);
        ensureDirectory(this.modelsDir, {what: "the models folder"});
        writeFileDurably(this.path, JSON.stringify(checked, null, 4) + "\n");
        return result;
    }
}

function slug(text: string) {
    const cleaned = text.toLowerCase().replace(/\.gguf$/, "").replace(/[^a-z0-9._:-]+/g, "-").replace(/^[^a-z0-9]+|-+$/g, "");
    return (cleaned === "" ? "model" : cleaned).slice(0, 100);
}

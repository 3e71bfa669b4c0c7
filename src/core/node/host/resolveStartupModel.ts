import fs from "node:fs";
import path from "node:path";
import {ModelRegistry} from "../models/ModelRegistry.js";

export type StartupModelSources = {
    /** A path given on the command line (`--model`). */
    explicit?: string,
    /** Defaults to `process.env`. */
    env?: NodeJS.ProcessEnv,
    /** The models folder whose registry's default model is used (`models default`, Make default in the app). */
    modelsDir?: string,
    /** Folders whose first `*.gguf` (by name) is used, in order. Defaults to none. */
    folders?: string[],
    /** The model path saved in the app's settings (the last model loaded there). */
    saved?: string | null
};

export type StartupModel = {path: string, source: "explicit" | "env" | "default" | "folder" | "settings"} | null;

/**
 * The model to start with, for every front end (CLI, web mode, the desktop app), in this order:
 * 1. the path given on the command line;
 * 2. `CLEANROOM_MODEL`;
 * 3. the default model of the models folder's registry;
 * 4. the first GGUF (by name) in `folders` (web mode: the project's `models/`, then the app's models folder);
 * 5. the model saved in the app's settings.
 * Null when none applies. A missing or damaged registry counts as no default (`models list` reports it).
 */
export function resolveStartupModel({explicit, env = process.env, modelsDir, folders = [], saved}: StartupModelSources): StartupModel {
    if (explicit != null && explicit !== "")
        return {path: path.resolve(explicit), source: "explicit"};

    if (env.CLEANROOM_MODEL != null && env.CLEANROOM_MODEL !== "")
        return {path: path.resolve(env.CLEANROOM_MODEL), source: "env"};

    const registryDefault = modelsDir != null ? registryDefaultIn(modelsDir) : null;
    if (registryDefault != null)
        return {path: registryDefault, source: "default"};

    for (const folder of folders) {
        const found = firstGgufIn(folder);
        if (found != null)
            return {path: found, source: "folder"};
    }

    return saved != null && saved !== "" ? {path: saved, source: "settings"} : null;
}

function registryDefaultIn(modelsDir: string): string | null {
    try {
        return ModelRegistry.open(modelsDir).defaultModel()?.path ?? null;
    } catch {
        return null;
    }
}

function firstGgufIn(folder: string): string | null {
    let names: string[];
    try {
        names = fs.readdirSync(folder);
    } catch {
        return null;
    }
    const name = names.filter((entry) => entry.toLowerCase().endsWith(".gguf")).sort()[0];
    return name == null ? null : path.join(folder, name);
}

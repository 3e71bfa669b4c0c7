import fs from "node:fs";
import path from "node:path";

export type StartupModelSources = {
    /** A path given on the command line. */
    explicit?: string,
    /** Defaults to `process.env`. */
    env?: NodeJS.ProcessEnv,
    /** The models folder's default model (its registry). */
    registryDefault?: string | null,
    /** Folders whose first `*.gguf` (by name) is used, in order. */
    folders?: string[],
    /** The model path saved in settings. */
    saved?: string | null
};

export type StartupModel = {path: string, source: "explicit" | "env" | "default" | "folder" | "settings"} | null;

/**
 * The model to load at start: the explicit path, else CLEANROOM_MODEL, else the models folder's
 * default model, else the first GGUF in the folders, else the saved one.
 */
export function resolveStartupModel({explicit, env = process.env, registryDefault, folders = [], saved}: StartupModelSources): StartupModel {
    if (explicit != null && explicit !== "")
        return {path: path.resolve(explicit), source: "explicit"};

    if (env.CLEANROOM_MODEL != null && env.CLEANROOM_MODEL !== "")
        return {path: path.resolve(env.CLEANROOM_MODEL), source: "env"};

    if (registryDefault != null && registryDefault !== "")
        return {path: registryDefault, source: "default"};

    for (const folder of folders) {
        const found = firstGgufIn(folder);
        if (found != null)
            return {path: found, source: "folder"};
    }

    return saved != null && saved !== "" ? {path: saved, source: "settings"} : null;
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

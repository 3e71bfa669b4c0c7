import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {DetectedApp, DetectedModel, DetectionResult, DetectionSkip} from "../../common/models.js";
import {startsWithGgufMagic} from "./ModelDownloader.js";

export type DetectInstalledModelsOptions = {
    /** Home folder to search. Defaults to `os.homedir()`. */
    home?: string,
    /** Which OS's folder layout to search. Defaults to `process.platform`. */
    platform?: NodeJS.Platform,
    /**
     * Environment for `OLLAMA_MODELS`, `XDG_DATA_HOME`, `XDG_CONFIG_HOME`, `APPDATA` and `LOCALAPPDATA`.
     * Defaults to `process.env` when `home` is not given, else to `{}` (a fake home stays self-contained).
     */
    env?: NodeJS.ProcessEnv,
    /** How deep to look below each app's models folder. Defaults to `5`. */
    maxDepth?: number
};

type SearchDir = {app: DetectedApp, dir: string, kind: "gguf-tree" | "ollama"};

const defaultMaxDepth = 5;
const ollamaModelMediaType = "application/vnd.ollama.image.model";
/** Split GGUF parts (`-00002-of-00003.gguf`): the model is opened through part 1. */
const splitPart = /-(\d+)-of-\d+\.gguf$/i;
/** Vision projectors and similar companions are GGUF files but not chat models. */
const companionFile = /(^|[-_.])mmproj([-_.]|$)/i;

/** The folders each app keeps its models in, for one OS. */
export function modelSearchDirs({home = os.homedir(), platform = process.platform, env = {}}: Omit<DetectInstalledModelsOptions, "maxDepth"> = {}): SearchDir[] {
    // Native joins: on Windows they are win32 joins; elsewhere a Windows layout can still be searched in a fake home.
    const join = path.join;
    const value = (name: string) => (env[name] != null && env[name] !== "" ? env[name] : null);
    const appData = value("APPDATA") ?? join(home, "AppData", "Roaming");
    const localAppData = value("LOCALAPPDATA") ?? join(home, "AppData", "Local");
    const xdgData = value("XDG_DATA_HOME") ?? join(home, ".local", "share");
    const xdgConfig = value("XDG_CONFIG_HOME") ?? join(home, ".config");
    const macSupport = join(home, "Library", "Application Support");

    const dirs: SearchDir[] = [
        {app: "lmstudio", dir: join(home, ".lmstudio", "models"), kind: "gguf-tree"},
        {app: "lmstudio", dir: join(home, ".cache", "lm-studio", "models"), kind: "gguf-tree"},
        {app: "ollama", dir: value("OLLAMA_MODELS") ?? join(home, ".ollama", "models"), kind: "ollama"},
        {app: "jan", dir: join(home, "jan", "models"), kind: "gguf-tree"}
    ];
    if (platform === "win32") {
        dirs.push(
            {app: "jan", dir: join(appData, "Jan", "data", "models"), kind: "gguf-tree"},
            {app: "jan", dir: join(appData, "Jan", "data", "llamacpp", "models"), kind: "gguf-tree"},
            {app: "gpt4all", dir: join(localAppData, "nomic.ai", "GPT4All"), kind: "gguf-tree"}
        );
    } else if (platform === "darwin") {
        dirs.push(
            {app: "jan", dir: join(macSupport, "Jan", "data", "models"), kind: "gguf-tree"},
            {app: "jan", dir: join(macSupport, "Jan", "data", "llamacpp", "models"), kind: "gguf-tree"},
            {app: "gpt4all", dir: join(macSupport, "nomic.ai", "GPT4All"), kind: "gguf-tree"}
        );
    } else {
        dirs.push(
            {app: "jan", dir: join(xdgConfig, "Jan", "data", "models"), kind: "gguf-tree"},
            {app: "jan", dir: join(xdgConfig, "Jan", "data", "llamacpp", "models"), kind: "gguf-tree"},
            {app: "jan", dir: join(xdgData, "Jan", "data", "models"), kind: "gguf-tree"},
            {app: "gpt4all", dir: join(xdgData, "nomic.ai", "GPT4All"), kind: "gguf-tree"},
            // Ollama's Linux service install keeps its store under the service user's home.
            ...(value("OLLAMA_MODELS") == null && home === os.homedir()
                ? [{app: "ollama" as const, dir: "/usr/share/ollama/.ollama/models", kind: "ollama" as const}]
                : [])
        );
    }
    return dirs;
}

/**
 * Finds GGUF models that LM Studio, Ollama, Jan and GPT4All already downloaded, to be used in
 * place (nothing is copied). Every file reported starts with the GGUF magic; files that do not,
 * Ollama tags whose blob is missing, and companion files (vision projectors, later parts of a
 * split model) are listed in `skipped` with the reason.
 */
export function detectInstalledModels(options: DetectInstalledModelsOptions = {}): DetectionResult {
    const home = options.home ?? os.homedir();
    const env = options.env ?? (options.home == null ? process.env : {});
    const platform = options.platform ?? process.platform;
    const maxDepth = options.maxDepth ?? defaultMaxDepth;

    const found = new Map<string, DetectedModel>();
    const skipped: DetectionSkip[] = [];
    const searched: DetectionResult["searched"] = [];
    const seenDirs = new Set<string>();

    const add = (app: DetectedApp, filePath: string, name: string) => {
        const existing = found.get(filePath);
        if (existing != null) {
            if (!existing.names.includes(name))
                existing.names.push(name);
            return;
        }
        let fileBytes: number;
        try {
            const stat = fs.statSync(filePath);
            if (!stat.isFile()) {
                skipped.push({app, path: filePath, reason: "not a regular file"});
                return;
            }
            fileBytes = stat.size;
        } catch {
            skipped.push({app, path: filePath, reason: "missing or unreadable (a dangling link?)"});
            return;
        }
        if (!startsWithGgufMagic(filePath)) {
            skipped.push({app, path: filePath, reason: "does not start with the GGUF magic"});
            return;
        }
        found.set(filePath, {app, path: filePath, names: [name], fileBytes});
    };

    for (const {app, dir, kind} of modelSearchDirs({home, platform, env})) {
        const exists = isDirectory(dir);
        searched.push({app, dir, exists});
        if (!exists || seenDirs.has(path.resolve(dir)))
            continue;
        seenDirs.add(path.resolve(dir));

        if (kind === "ollama")
            scanOllama(dir, add, skipped);
        else
            for (const filePath of walkGgufFiles(dir, maxDepth)) {
                const base = path.basename(filePath);
                if (companionFile.test(base))
                    skipped.push({app, path: filePath, reason: "a companion file (vision projector), not a chat model"});
                else if (Number(splitPart.exec(base)?.[1] ?? 1) > 1)
                    skipped.push({app, path: filePath, reason: "a later part of a split model (opened through part 1)"});
                else
                    add(app, filePath, path.relative(dir, filePath).split(path.sep).join("/"));
            }
    }
    return {models: [...found.values()], skipped, searched};
}

/**
 * Ollama: `manifests/<registry>/<namespace>/<model>/<tag>` are JSON manifests; the layer with
 * media type `application/vnd.ollama.image.model` names the GGUF blob `blobs/sha256-<hex>`.
 */
function scanOllama(modelsDir: string, add: (app: DetectedApp, filePath: string, name: string) => void, skipped: DetectionSkip[]) {
    const manifestsDir = path.join(modelsDir, "manifests");
    for (const manifestPath of walkFiles(manifestsDir, 6)) {
        let manifest: {layers?: Array<{mediaType?: unknown, digest?: unknown}>};
        try {
            manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
        } catch {
            skipped.push({app: "ollama", path: manifestPath, reason: "the manifest is not valid JSON"});
            continue;
        }
        const layer = manifest.layers?.find((candidate) => candidate.mediaType === ollamaModelMediaType);
        const digest = typeof layer?.digest === "string" ? /^sha256:([0-9a-f]{64})$/.exec(layer.digest) : null;
        if (digest == null) {
            skipped.push({app: "ollama", path: manifestPath, reason: "the manifest has no model layer"});
            continue;
        }
        add("ollama", path.join(modelsDir, "blobs", `sha256-${digest[1]}`), ollamaName(path.relative(manifestsDir, manifestPath)));
    }
}

/** `registry.ollama.ai/library/llama3.2/1b` -> `llama3.2:1b`; other namespaces and registries are kept. */
function ollamaName(relativeManifestPath: string) {
    const parts = relativeManifestPath.split(path.sep);
    const tag = parts.pop() ?? "latest";
    const model = parts.pop() ?? "?";
    const registry = parts.shift();
    const namespace = parts.join("/");
    const prefix = registry === "registry.ollama.ai" ? (namespace === "library" ? "" : `${namespace}/`) : `${[registry, namespace].filter(Boolean).join("/")}/`;
    return `${prefix}${model}:${tag}`;
}

function* walkGgufFiles(dir: string, maxDepth: number): Generator<string> {
    for (const filePath of walkFiles(dir, maxDepth))
        if (filePath.toLowerCase().endsWith(".gguf"))
            yield filePath;
}

/** Files below `dir` (following links to files, not to folders, so a loop cannot trap the walk). */
function* walkFiles(dir: string, maxDepth: number): Generator<string> {
    let entries: fs.Dirent[];
    try {
        entries = fs.readdirSync(dir, {withFileTypes: true});
    } catch {
        return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
        const entryPath = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            if (maxDepth > 1)
                yield* walkFiles(entryPath, maxDepth - 1);
        } else if (entry.isFile() || entry.isSymbolicLink())
            yield entryPath;
    }
}

function isDirectory(dir: string) {
    try {
        return fs.statSync(dir).isDirectory();
    } catch {
        return false;
    }
}

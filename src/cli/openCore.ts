import type {GpuSetting} from "../core/common/api/types.js";
import {CleanroomError, isCleanroomError} from "../core/common/errors.js";
import {Core, type CloudAccess} from "../core/node/Core.js";
import {defaultDatabasePath, defaultModelsDir} from "../core/node/paths/appPaths.js";
import {loadLlama} from "../core/node/engine/loadLlama.js";
import type {LocalEngineOptions} from "../core/node/engine/LocalEngine.js";
import {resolveStartupModel} from "../core/node/host/resolveStartupModel.js";
import {terminalStoreKey} from "../core/node/host/terminalStoreKey.js";
import {missingModelFile} from "../core/node/models/missingModelFile.js";
import {ModelRegistry} from "../core/node/models/ModelRegistry.js";
import {realDatabasePath} from "../core/node/database/realDatabasePath.js";
import {cloudApiKeyFromEnvironment} from "./cloudApiKeyFromEnvironment.js";
import {MissingModelFileError} from "./MissingModelFileError.js";
import {describeLlamaBuild} from "../core/node/engine/describeLlamaBuild.js";
import {traceStartup} from "../core/node/startupTrace.js";
import {trackOpenCore} from "./openCores.js";
import {reportError, reportWarning} from "./output.js";

export type CoreCliOptions = {
    db?: string,
    threads?: number,
    contextSize?: number,
    /** `--gpu`. Defaults to `$CLEANROOM_GPU`, else `auto` (see `loadLlama`). */
    gpu?: GpuSetting,
    poolBudget?: number,
    /** Never-used contexts kept created ahead (`ContextPoolOptions.freshReserve`). Defaults to `0`. */
    freshContextReserve?: number,
    /** node-llama-cpp's cap on the threads of all decodes running at once, split among them (`llama.maxThreads`). Defaults to node-llama-cpp's. */
    maxThreads?: number,
    cloud?: CloudAccess,
    /** How errors are printed (see `reportError`). */
    json?: boolean
};

/** A core on the CLI's database (`:memory:` for an incognito chat), opened with `terminalStoreKey` (the passphrase from the environment or the terminal). */
export async function openCore(options: CoreCliOptions): Promise<Core> {
    const database = realDatabasePath(options.db ?? defaultDatabasePath());
    const engine: LocalEngineOptions = {
        threads: options.threads,
        contextSize: options.contextSize,
        pool: options.poolBudget != null || options.freshContextReserve != null ? {budgetBytes: options.poolBudget, freshReserve: options.freshContextReserve} : undefined
    };
    const llama = await loadLlama(options.gpu);
    if (options.maxThreads != null)
        llama.maxThreads = options.maxThreads;
    traceStartup("llama.cpp loaded", {llamaBuild: describeLlamaBuild(llama), llamaGpu: String(llama.gpu)});
    const key = database === ":memory:" ? {} : await terminalStoreKey(database, (warning) => reportWarning(warning, options.json === true));
    traceStartup("store key");
    const core = trackOpenCore(Core.create(llama, {database, key, engine, cloud: {apiKey: () => cloudApiKeyFromEnvironment(), ...options.cloud}}));
    traceStartup("database opened");
    // A scrub no command waits for (an idle or evicted session) is reported too, and the CLI exits 4.
    core.onAuditEvent((event) => {
        if (event.kind === "security.fault" && isCleanroomError(event.data.error))
            reportError(event.data.error, options.json === true);
    });
    return core;
}

export type CliModel = {
    /** Null when there is none to load (see `missingDefault`). */
    path: string | null,
    /** The registry's default model when its file is gone: the error that says what to do (a cloud turn goes on without it). */
    missingDefault: MissingModelFileError | null
};

/** The model for `chat` and `selftest`: the option, else CLEANROOM_MODEL, else the models folder's default (`resolveStartupModel`). */
export function resolveCliModel(option: string | undefined): CliModel {
    const modelsDir = defaultModelsDir();
    const startup = resolveStartupModel({explicit: option, modelsDir});
    if (startup?.source === "default") {
        const model = ModelRegistry.open(modelsDir).defaultModel();
        const missing = model != null ? missingModelFile(model) : null;
        if (model != null && missing != null)
            return {path: null, missingDefault: new MissingModelFileError(model, missing)};
    }
    return {path: startup?.path ?? null, missingDefault: null};
}

/** The model a local turn or the self-test needs: `MODEL_FILE_MISSING` for a default whose file is gone, `MODEL_NOT_LOADED` when there is none. */
export function requireCliModel(option: string | undefined): string {
    const {path, missingDefault} = resolveCliModel(option);
    if (missingDefault != null)
        throw missingDefault;
    if (path == null)
        throw new CleanroomError("MODEL_NOT_LOADED", "No model: pass --model <gguf>, set CLEANROOM_MODEL, or choose a default with `models default`.");
    return path;
}

import {Core, type CloudAccess} from "../core/node/Core.js";
import {defaultDatabasePath} from "../core/node/appPaths.js";
import {loadLlama} from "../core/node/engine/loadLlama.js";
import type {LocalEngineOptions} from "../core/node/engine/LocalEngine.js";
import {ModelRegistry} from "../core/node/models/ModelRegistry.js";
import {defaultModelsDir} from "../core/node/models/defaultModelsDir.js";
import {cloudApiKeyFromEnvironment} from "./cloudApiKeyFromEnvironment.js";

export type CoreCliOptions = {
    db?: string,
    threads?: number,
    contextSize?: number,
    poolBudget?: number,
    cloud?: CloudAccess
};

export async function openCore(options: CoreCliOptions): Promise<Core> {
    const engine: LocalEngineOptions = {
        threads: options.threads,
        contextSize: options.contextSize,
        pool: options.poolBudget != null ? {budgetBytes: options.poolBudget} : undefined
    };
    return Core.create(await loadLlama(), {
        database: options.db ?? defaultDatabasePath(),
        engine,
        cloud: {apiKey: () => cloudApiKeyFromEnvironment(), ...options.cloud}
    });
}

/** The model to use: the option, else CLEANROOM_MODEL, else the default model of the app's models folder. */
export function resolveModelPath(option: string | undefined): string | undefined {
    if (option != null)
        return option;
    if (process.env.CLEANROOM_MODEL != null && process.env.CLEANROOM_MODEL !== "")
        return process.env.CLEANROOM_MODEL;
    try {
        return ModelRegistry.open(defaultModelsDir()).defaultModel()?.path;
    } catch {
        return undefined; // an unreadable registry is reported by `models list`; here it only means no default
    }
}

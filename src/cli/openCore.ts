import {Core} from "../core/node/Core.js";
import {defaultDatabasePath} from "../core/node/appPaths.js";
import {loadLlama} from "../core/node/engine/loadLlama.js";
import type {LocalEngineOptions} from "../core/node/engine/LocalEngine.js";

export type CoreCliOptions = {
    db?: string,
    threads?: number,
    contextSize?: number,
    poolBudget?: number
};

export async function openCore(options: CoreCliOptions): Promise<Core> {
    const engine: LocalEngineOptions = {
        threads: options.threads,
        contextSize: options.contextSize,
        pool: options.poolBudget != null ? {budgetBytes: options.poolBudget} : undefined
    };
    return Core.create(await loadLlama(), {database: options.db ?? defaultDatabasePath(), engine});
}

/** The model to use: the option, else CLEANROOM_MODEL. */
export function resolveModelPath(option: string | undefined): string | undefined {
    return option ?? (process.env.CLEANROOM_MODEL !== "" ? process.env.CLEANROOM_MODEL : undefined);
}

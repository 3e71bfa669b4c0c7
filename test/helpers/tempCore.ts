import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {GpuSetting} from "../../src/core/common/api/types.js";
import type {CoreOptions} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import type {LocalEngineOptions} from "../../src/core/node/engine/LocalEngine.js";
import {openTestCore} from "./coreServices.js";

export function tempDir(label: string) {
    return fs.mkdtempSync(path.join(os.tmpdir(), `cleanroom-${label}-`));
}

/**
 * A Core on a fresh SQLite file with the real model loaded, one thread (the fast choice on small
 * machines); `servicesOf` reaches its services. `gpu`: the backend (`loadLlama`), e.g. `vulkan`
 * for the isolation proofs with the KV in device memory. Defaults to the process's.
 */
export async function createTestCore(modelPath: string, engine: LocalEngineOptions = {}, options: Partial<CoreOptions> = {}, gpu?: GpuSetting) {
    const dir = tempDir("core");
    const database = path.join(dir, "test.db");
    const core = openTestCore(await loadLlama(gpu, {processDefault: gpu == null}), {database, engine: {threads: 1, contextSize: 512, ...engine, pool: {idleTimeoutMs: 0, ...engine.pool}}, ...options});
    await core.loadModel(modelPath);
    return {core, dir, database};
}

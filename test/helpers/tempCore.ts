import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Core, type CoreOptions} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import type {LocalEngineOptions} from "../../src/core/node/engine/LocalEngine.js";

export function tempDir(label: string) {
    return fs.mkdtempSync(path.join(os.tmpdir(), `cleanroom-${label}-`));
}

/** A Core on a fresh SQLite file with the real model loaded, one thread (the fast choice on small machines). */
export async function createTestCore(modelPath: string, engine: LocalEngineOptions = {}, options: Partial<CoreOptions> = {}) {
    const dir = tempDir("core");
    const database = path.join(dir, "test.db");
    const core = Core.create(await loadLlama(), {database, engine: {threads: 1, contextSize: 512, ...engine, pool: {idleTimeoutMs: 0, ...engine.pool}}, ...options});
    await core.loadModel(modelPath);
    return {core, dir, database};
}

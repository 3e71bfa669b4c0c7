import {AsyncDisposeAggregator} from "lifecycle-utils";
import type {GpuSetting} from "../../common/api/types.js";
import type {SecretVault} from "../../common/secrets.js";
import {Core} from "../Core.js";
import {loadLlama} from "../engine/loadLlama.js";
import type {ContextPoolOptions} from "../engine/ContextPool.js";
import {defaultModelsDir} from "../paths/appPaths.js";
import type {ModelLibraryOptions} from "../models/ModelLibrary.js";
import {createCoreService, type CoreService} from "../rpc/createCoreService.js";
import {AppSettingsStore} from "../settings/AppSettingsStore.js";
import {CloudKeyStore} from "../secrets/CloudKeyStore.js";
import {FingerprintKeyStore} from "../secrets/FingerprintKeyStore.js";
import {MemorySecretVault} from "../secrets/MemorySecretVault.js";
import {SettingsStore} from "../settings/SettingsStore.js";
import type {StoreKeySource} from "../database/keys/types.js";
import {openDatabase} from "../database/openDatabase.js";
import {LocalApiServer, type LocalApiServerStarter} from "../serving/LocalApiServer.js";

export type CoreHostOptions = {
    /** SQLite file. */
    database: string,
    /** What opens the encrypted database. Defaults to `storeKeyFromEnvironment()` (see `openDatabase`). */
    key?: StoreKeySource,
    /** Overrides the saved thread setting. Defaults to the saved one, else the core's measured count. */
    threads?: number,
    /** Overrides the saved context size. Defaults to the saved one, else the core's default. */
    contextSize?: number,
    /** Overrides the saved GPU setting (`--gpu`). Defaults to the saved one (`auto` unless changed). */
    gpu?: GpuSetting,
    pool?: ContextPoolOptions,
    /** Defaults to a `MemorySecretVault`. */
    vault?: SecretVault,
    /** The models folder (downloads and `registry.json`). Defaults to `defaultModelsDir()`, as for the CLI. */
    modelsDir?: string,
    /** A model catalog file instead of `models/catalog.json`. */
    catalogPath?: string,
    /** Home folder searched for other apps' models. Defaults to the user's. */
    appsHome?: string,
    /** Passed to the model downloader (stall timeout, URL policy). Defaults to its defaults: https to public addresses only. */
    downloader?: ModelLibraryOptions["downloader"],
    /** `chat.send` may attach files by path on this machine (the desktop app); see `CoreServiceOptions.attachByPath`. Defaults to `false`. */
    attachByPath?: boolean,
    /** Starts the local API server (`src/serve`) for Settings → Local API server. Defaults to none: `apiServer.start` is refused. */
    apiServer?: LocalApiServerStarter
};

export type CoreHost = {
    core: Core,
    service: CoreService,
    /** The model path saved in settings, if any. */
    savedModelPath: string | null,
    /** The models folder (for `resolveStartupModel`). */
    modelsDir: string,
    /** Stops replies, then disposes the core (every session scrubbed). Runs once; a second call gets the same promise. */
    dispose(): Promise<void>
};

/** A core on its database, engine settings taken from the saved ones (or overrides), with the validated service (`createCoreService`) in front of it. */
export async function openCoreHost(options: CoreHostOptions): Promise<CoreHost> {
    const vault = options.vault ?? new MemorySecretVault();
    const saved = await readSavedSettings(options.database, options.key, vault);
    const cloudKeys = new CloudKeyStore(vault);
    const fingerprintKeys = new FingerprintKeyStore(vault);
    const threads = options.threads ?? saved.threads ?? undefined;
    const contextSize = options.contextSize ?? saved.contextSize ?? undefined;
    const gpu = options.gpu ?? saved.gpu;

    const core = Core.create(await loadLlama(gpu), {
        database: options.database,
        key: options.key,
        engine: {threads, contextSize, pool: options.pool},
        // The key is read from the host's vault for each cloud turn, only for the origin it was given for; the core never stores it.
        cloud: {apiKey: (endpoint) => cloudKeys.keyFor(endpoint), fingerprintKey: () => fingerprintKeys.key()}
    });
    const modelsDir = options.modelsDir ?? defaultModelsDir();
    const apiServer = new LocalApiServer(core, options.apiServer ?? null);
    const service = createCoreService(core, {
        apiServer,
        vault,
        runningEngine: {threads: saved.threads, contextSize: saved.contextSize, gpu},
        models: {dir: modelsDir, catalogPath: options.catalogPath, appsHome: options.appsHome, downloader: options.downloader},
        attachByPath: options.attachByPath
    });
    // Closing runs once (a second call gets the same promise): the API server and replies stopped first, then the core (every session scrubbed).
    const teardown = new AsyncDisposeAggregator();
    teardown.add(() => apiServer.close());
    teardown.add(service);
    teardown.add(() => core.dispose());
    return {
        core,
        service,
        savedModelPath: saved.modelPath,
        modelsDir,
        dispose: teardown.dispose
    };
}

async function readSavedSettings(database: string, key: StoreKeySource | undefined, vault: SecretVault) {
    const db = openDatabase(database, {key});
    try {
        return await new AppSettingsStore(new SettingsStore(db), vault).get();
    } finally {
        db.close();
    }
}

import type {CloudSettings} from "./CloudSettingsStore.js";

/**
 * Every key the core writes, in one place: the database's settings table and the host's secret
 * vault. Renaming one loses what users have stored under it, so they never change.
 */
export const settingKeys = {
    /** The app's settings (AppSettingsStore). */
    app: {
        modelPath: "app.modelPath",
        threads: "app.threads",
        contextSize: "app.contextSize",
        gpu: "app.gpu",
        lockAfterMinutes: "app.lockAfterMinutes",
        resumeSnapshots: "app.resumeSnapshots",
        resumeSnapshotMaxMiB: "app.resumeSnapshotMaxMiB"
    },
    /** The app's local API server (Settings → Local API server, LocalApiServer). */
    apiServer: {
        port: "apiServer.port",
        /** Whether the user last turned it on (it then starts with the app) or off. */
        on: "apiServer.on"
    },
    /** Documents (#23): the embedding model chosen for retrieval (EmbeddingModelChoice), a GGUF path; absent: BM25 alone. */
    documents: {
        embeddingModelPath: "documents.embeddingModelPath"
    },
    /** Where the shared cloud is (CloudSettingsStore, and the app's settings dialog through AppSettingsStore). */
    cloud: {
        endpoint: "cloud.endpoint",
        model: "cloud.model",
        contextLimit: "cloud.contextLimit",
        fallback: "cloud.fallback",
        neverSend: "cloud.neverSend"
    } satisfies Record<keyof CloudSettings, string>,
    /**
     * The thread count measured for a model on this machine, llama.cpp build and libuv pool (LocalEngine).
     * Keys of other tuner versions (and the unversioned `threads.tuned:…` of the first tuner) are left unread.
     */
    threadTuning: (tunerVersion: number, fingerprints: {model: string, machine: string, backend: string}) =>
        `threads.tuned.v${tunerVersion}:${fingerprints.model}:${fingerprints.machine}:${fingerprints.backend}`,
    /** The KV layout KvScrubber learned for a model, machine, llama.cpp build and context options (KvLayoutCache). */
    kvLayout: (cacheVersion: number, fingerprints: {model: string, machine: string, backend: string}, contextOptions: Record<string, unknown>) =>
        `kv.layout.v${cacheVersion}:${fingerprints.model}:${fingerprints.machine}:${fingerprints.backend}:${JSON.stringify(contextOptions)}`,
    /** A model file's successful validation, with the file's identity (ModelValidationMemo): unchanged, its header is not parsed again. */
    modelValidation: (validationVersion: number, modelPath: string) => `model.validated.v${validationVersion}:${modelPath}`,
    /** The GPU device probe's verdict for a device, driver, llama.cpp build and model architecture (DeviceProbeCache). */
    deviceProbe: (probeVersion: number, key: {device: string, driver: string, llamaBuild: string, architecture: string}) =>
        `device.probe.v${probeVersion}:${JSON.stringify([key.device, key.driver, key.llamaBuild, key.architecture])}`
} as const;

/** Names in the host's secret vault (the OS keychain in the app): never in the database. */
export const secretNames = {
    /** The cloud API key, with the origin it was given for (CloudKeyStore). */
    cloudApiKey: "cloud.apiKey",
    /** The install's key for fingerprints of the user's conversations (FingerprintKeyStore). */
    fingerprintKey: "cloud.fingerprintKey",
    /** The desktop app's database key without a passphrase (keychainStoreKey), wrapped by the OS keychain. */
    storeKey: "store.databaseKey"
} as const;

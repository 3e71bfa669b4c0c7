import type {ApiParsedInput, AppSettings} from "../../common/api/index.js";
import {defaultLockAfterMinutes, defaultResumeSnapshotMaxMiB} from "../../common/api/limits.js";
import {GpuSettingSchema} from "../../common/api/gpuSchemas.js";
import {InvalidInputError} from "../../common/errors.js";
import type {SecretVault} from "../../common/secrets.js";
import {chooseEmbeddingModel, chosenEmbeddingModel} from "../documents/embedding/chooseEmbeddingModel.js";
import {CloudKeyStore} from "../secrets/CloudKeyStore.js";
import type {SettingsStore} from "./SettingsStore.js";
import {settingKeys} from "./settingKeys.js";

const keys = {
    ...settingKeys.app,
    cloudEndpoint: settingKeys.cloud.endpoint,
    cloudModel: settingKeys.cloud.model,
    cloudFallback: settingKeys.cloud.fallback,
    cloudNeverSend: settingKeys.cloud.neverSend
} as const;

/**
 * The user-facing settings over the core's key/value settings table. The cloud API key is
 * never written there: it goes to the host's secret vault, bound to the endpoint it is given
 * with (or the one already set), and is reported stored only while that endpoint is set.
 */
export class AppSettingsStore {
    private readonly _settings: SettingsStore;
    private readonly _vault: SecretVault;
    private readonly _keys: CloudKeyStore;

    public constructor(settings: SettingsStore, vault: SecretVault) {
        this._settings = settings;
        this._vault = vault;
        this._keys = new CloudKeyStore(vault);
    }

    public async get(): Promise<AppSettings> {
        const endpoint = this._settings.get<string>(keys.cloudEndpoint) ?? null;
        const key = await this._keys.status(endpoint);
        return {
            modelPath: this._settings.get<string>(keys.modelPath) ?? null,
            threads: this._settings.get<number>(keys.threads) ?? null,
            contextSize: this._settings.get<number>(keys.contextSize) ?? null,
            gpu: GpuSettingSchema.catch("auto").parse(this._settings.get<string>(keys.gpu) ?? "auto"),
            lockAfterMinutes: this._settings.get<number>(keys.lockAfterMinutes) ?? defaultLockAfterMinutes,
            resumeSnapshots: this._settings.get<boolean>(keys.resumeSnapshots) ?? true,
            resumeSnapshotMaxMiB: this._settings.get<number>(keys.resumeSnapshotMaxMiB) ?? defaultResumeSnapshotMaxMiB,
            embeddingModelPath: chosenEmbeddingModel(this._settings),
            cloud: {
                endpoint,
                model: this._settings.get<string>(keys.cloudModel) ?? null,
                fallback: this._settings.get<boolean>(keys.cloudFallback) ?? false,
                neverSend: this._settings.get<string[]>(keys.cloudNeverSend) ?? [],
                apiKeyStored: key.usable,
                apiKeyReentry: key.reentry?.message ?? null,
                keyStorage: this._vault.storage,
                keyStorageWarning: this._vault.warning
            }
        };
    }

    /**
     * Refused as a whole (nothing written) when a key comes with no endpoint to bind it to, or an
     * embedding model that is not a readable GGUF file.
     */
    public async set({embeddingModelPath, ...changes}: ApiParsedInput<"settings.set">): Promise<AppSettings> {
        const endpoint = changes.cloudEndpoint !== undefined ? changes.cloudEndpoint : this._settings.get<string>(keys.cloudEndpoint) ?? null;
        if (typeof changes.cloudApiKey === "string" && endpoint == null)
            throw new InvalidInputError("settings.set", ["cloudApiKey: set cloudEndpoint too; a key is kept only for the endpoint it is given for"]);
        if (embeddingModelPath !== undefined)
            chooseEmbeddingModel(this._settings, embeddingModelPath);
        if (typeof changes.cloudApiKey === "string")
            await this._keys.store(changes.cloudApiKey, endpoint!);
        else if (changes.cloudApiKey === null)
            await this._keys.forget();

        for (const [field, value] of Object.entries(changes) as Array<[keyof typeof keys | "cloudApiKey", unknown]>) {
            if (value === undefined || field === "cloudApiKey")
                continue;
            if (value === null)
                this._settings.delete(keys[field]);
            else
                this._settings.set(keys[field], value);
        }
        return await this.get();
    }
}

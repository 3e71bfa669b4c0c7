import type {ApiParsedInput, AppSettings} from "../../common/api/index.js";
import type {SecretVault} from "../../common/secrets.js";
import type {SettingsStore} from "../store/SettingsStore.js";

export const cloudApiKeySecret = "cloud.apiKey";

const keys = {
    modelPath: "app.modelPath",
    threads: "app.threads",
    contextSize: "app.contextSize",
    cloudEndpoint: "cloud.endpoint",
    cloudModel: "cloud.model",
    cloudFallback: "cloud.fallback"
} as const;

/**
 * The user-facing settings over the core's key/value settings table. The cloud API key is
 * never written there: it goes to the host's secret vault.
 */
export class AppSettingsStore {
    private readonly _settings: SettingsStore;
    private readonly _vault: SecretVault;

    public constructor(settings: SettingsStore, vault: SecretVault) {
        this._settings = settings;
        this._vault = vault;
    }

    public async get(): Promise<AppSettings> {
        return {
            modelPath: this._settings.get<string>(keys.modelPath) ?? null,
            threads: this._settings.get<number>(keys.threads) ?? null,
            contextSize: this._settings.get<number>(keys.contextSize) ?? null,
            cloud: {
                endpoint: this._settings.get<string>(keys.cloudEndpoint) ?? null,
                model: this._settings.get<string>(keys.cloudModel) ?? null,
                fallback: this._settings.get<boolean>(keys.cloudFallback) ?? false,
                apiKeyStored: await this._vault.has(cloudApiKeySecret),
                keyStorage: this._vault.storage,
                keyStorageWarning: this._vault.warning
            }
        };
    }

    public async set(changes: ApiParsedInput<"settings.set">): Promise<AppSettings> {
        if (changes.cloudApiKey !== undefined)
            await this._vault.write(cloudApiKeySecret, changes.cloudApiKey);

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

import type {AuditLog} from "../audit/AuditLog.js";
import type {SettingsStore} from "./SettingsStore.js";
import {settingKeys} from "./settingKeys.js";

export type CloudSettings = {
    endpoint: string | null,
    model: string | null,
    /** Tokens the endpoint accepts; null: ask the endpoint. */
    contextLimit: number | null,
    /** The global cloud-fallback switch. Off by default. */
    fallback: boolean,
    /** The user's "Never send these" words and phrases: a cloud request holding one is stopped, or sends it redacted. */
    neverSend: string[]
};

const cloudSettingKeys = settingKeys.cloud;

/** Where the shared cloud is and whether the fallback is on, in the settings table; `override` wins and is never saved. */
export class CloudSettingsStore {
    private readonly _settings: SettingsStore;
    private readonly _audit: AuditLog;
    private readonly _override: Partial<CloudSettings>;

    public constructor(settings: SettingsStore, audit: AuditLog, override: Partial<CloudSettings> = {}) {
        this._settings = settings;
        this._audit = audit;
        this._override = override;
    }

    public get(): CloudSettings {
        return {
            endpoint: this._settings.get<string>(cloudSettingKeys.endpoint) ?? null,
            model: this._settings.get<string>(cloudSettingKeys.model) ?? null,
            contextLimit: this._settings.get<number>(cloudSettingKeys.contextLimit) ?? null,
            fallback: this._settings.get<boolean>(cloudSettingKeys.fallback) ?? false,
            neverSend: this._settings.get<string[]>(cloudSettingKeys.neverSend) ?? [],
            ...this._override
        };
    }

    /** Changes the fields given (`null` clears one) and records the change (never the endpoint itself). */
    public set(changes: Partial<CloudSettings>): CloudSettings {
        for (const [field, key] of Object.entries(cloudSettingKeys) as Array<[keyof CloudSettings, string]>) {
            const value = changes[field];
            if (value === undefined)
                continue;
            if (value === null)
                this._settings.delete(key);
            else
                this._settings.set(key, value);
        }
        const next = this.get();
        this._audit.record({kind: "cloud.settings", data: {fallback: next.fallback, endpointSet: next.endpoint != null, model: next.model}});
        return next;
    }
}

import * as z from "zod";
import {settingKeys} from "../settings/settingKeys.js";
import type {SettingsStore} from "../settings/SettingsStore.js";

/** Bumped when the probe changes what it checks: older verdicts are then left unused. */
const deviceProbeVersion = 1;

/** What the verdict is kept per: each may change whether a device keeps requests apart. */
export type DeviceProbeCacheKey = {
    /** The GPU device's name, as ggml reports it. */
    device: string,
    /** `gpuDriverFingerprint` of the backend's driver. */
    driver: string,
    /** The llama.cpp binary (`describeLlamaBuild`). */
    llamaBuild: string,
    /** The model's architecture (GGUF `general.architecture`): another one runs other kernels. */
    architecture: string
};

const CachedVerdictSchema = z.object({
    passed: z.boolean(),
    problem: z.string().nullable(),
    durationMs: z.number().nonnegative(),
    probedAt: z.number()
});

export type CachedDeviceVerdict = z.infer<typeof CachedVerdictSchema>;

/**
 * The device probe's verdict (`DeviceProbe`) for one device, driver, llama.cpp build and model
 * architecture, kept in the app's settings so that later loads skip the probe. A failed verdict is
 * kept too: the device stays unused until one of those changes. An entry that is not well formed
 * is ignored (the probe runs again).
 */
export class DeviceProbeCache {
    public readonly key: string;
    private readonly _settings: SettingsStore;

    public constructor(settings: SettingsStore, key: DeviceProbeCacheKey) {
        this._settings = settings;
        this.key = settingKeys.deviceProbe(deviceProbeVersion, key);
    }

    public read(): CachedDeviceVerdict | null {
        const parsed = CachedVerdictSchema.safeParse(this._settings.get(this.key));
        return parsed.success ? parsed.data : null;
    }

    public write(verdict: CachedDeviceVerdict): void {
        this._settings.set(this.key, verdict);
    }
}

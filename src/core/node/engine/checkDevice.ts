import type {LlamaModel} from "node-llama-cpp";
import type {LoadedModelInfo} from "./LocalEngine.js";
import type {GpuBackend} from "../../common/api/types.js";
import type {SettingsStore} from "../settings/SettingsStore.js";
import {DeviceProbe} from "./DeviceProbe.js";
import {DeviceProbeCache, type DeviceProbeCacheKey} from "./DeviceProbeCache.js";
import {describeLlamaBuild} from "./describeLlamaBuild.js";
import {gpuDriverFingerprint} from "./gpuDriverFingerprint.js";

export type DeviceCheck = NonNullable<LoadedModelInfo["deviceCheck"]>;

/** A device check and what it was kept under; `probe` when the probe ran on this load. */
export type DeviceCheckOutcome = {check: DeviceCheck, key: DeviceProbeCacheKey, ranProbe: boolean};

/**
 * Whether the GPU device a model was just loaded on keeps requests apart (`DeviceProbe`): the
 * verdict cached for this device, driver, llama.cpp build and architecture, else the probe, run now
 * and its verdict cached. A probe that cannot run (a context the device cannot create) fails the
 * check without being cached.
 */
export async function checkDevice(model: LlamaModel, {backend, device, architecture, threads, settings}: {
    backend: NonNullable<GpuBackend>, device: string, architecture: string,
    /** The probe's thread count (for layers left on the CPU). Defaults to node-llama-cpp's. */
    threads?: number,
    /** Where verdicts are kept; `null`: nowhere, the probe runs on every load. */
    settings: SettingsStore | null
}): Promise<DeviceCheckOutcome> {
    const key: DeviceProbeCacheKey = {device, driver: gpuDriverFingerprint(backend), llamaBuild: describeLlamaBuild(model.llama), architecture};
    const cache = settings == null ? null : new DeviceProbeCache(settings, key);
    const cached = cache?.read();
    if (cached != null)
        return {check: {device, passed: cached.passed, problem: cached.problem, source: "cached", durationMs: cached.durationMs}, key, ranProbe: false};

    const started = performance.now();
    try {
        const result = await DeviceProbe.run(model, {swaFullCache: true, ...(threads != null ? {threads} : {})});
        cache?.write({passed: result.passed, problem: result.problem, durationMs: result.durationMs, probedAt: Date.now()});
        return {check: {device, passed: result.passed, problem: result.problem, source: "probed", durationMs: result.durationMs}, key, ranProbe: true};
    } catch (error) {
        return {
            check: {device, passed: false, source: "probed", durationMs: performance.now() - started,
                problem: `the probe could not run on the device: ${error instanceof Error ? error.message : String(error)}`},
            key, ranProbe: true
        };
    }
}

import {describe, expect, it} from "vitest";
import {DeviceProbeCache, type DeviceProbeCacheKey} from "../../src/core/node/engine/DeviceProbeCache.js";
import type {SettingsStore} from "../../src/core/node/settings/SettingsStore.js";
import {createTestCore} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

// The device probe's parts that need no device; those on the Vulkan device are in deviceProbe.vulkan.test.ts (run alone).
const modelPath = requireTestModel();

describe("the device probe's verdict is kept per device, driver, llama.cpp build and architecture", () => {
    const key: DeviceProbeCacheKey = {device: "llvmpipe (LLVM 15.0.6, 256 bits)", driver: "vulkan icd 0123456789abcdef", llamaBuild: "prebuilt b6000 vulkan", architecture: "llama"};
    const settings = (() => {
        const values = new Map<string, unknown>();
        return {get: (name: string) => values.get(name), set: (name: string, value: unknown) => void values.set(name, value)} as unknown as SettingsStore;
    })();

    it("a verdict is found again under the same key, and not when the build, the device, the driver or the architecture changes", () => {
        new DeviceProbeCache(settings, key).write({passed: true, problem: null, durationMs: 12, probedAt: 1});
        expect(new DeviceProbeCache(settings, {...key}).read()).toMatchObject({passed: true});
        for (const changed of [{llamaBuild: "prebuilt b6001 vulkan"}, {device: "AMD Radeon 780M"}, {driver: "vulkan icd fedcba9876543210"}, {architecture: "qwen3"}]) {
            expect(new DeviceProbeCache(settings, {...key, ...changed}).key).not.toBe(new DeviceProbeCache(settings, key).key);
            expect(new DeviceProbeCache(settings, {...key, ...changed}).read()).toBeNull();
        }
    });
});

describe.skipIf(modelPath == null)("no device probe on the CPU", () => {
    it("a load with --gpu off runs no probe and reports no device check", async () => {
        const {core} = await createTestCore(modelPath!, {}, {}, "off");
        try {
            expect(core.modelInfo()).toMatchObject({gpu: null, gpuLayers: 0, deviceCheck: null});
            expect(core.auditEvents({kinds: ["device.probed"]})).toEqual([]);
        } finally {
            await core.dispose();
        }
    });
});

import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {probeVulkanDevices} from "../../src/core/node/engine/vulkanDevices.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {chatJson, cleanroom} from "../helpers/gpuCli.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("where the model runs, as the CLI reports it", () => {
    it("--gpu off runs on the CPU and says so: no backend, no device, no layer offloaded", async () => {
        const run = await chatJson("gpu-off", modelPath!, ["--gpu", "off"]);
        expect(run.code, run.stderr).toBe(0);
        const turn = JSON.parse(run.stdout);
        expect(turn).toMatchObject({gpu: null, gpuDevice: null, gpuLayers: 0, isolation: {kvReadBack: "host", scrub: {verified: true}}});
    });

    it("auto (the default) offloads only where a GPU is usable: here, with no GPU-type device, it runs on the CPU", async () => {
        const run = await chatJson("gpu-auto", modelPath!, []);
        expect(run.code, run.stderr).toBe(0);
        const turn = JSON.parse(run.stdout);
        expect(turn.gpuLayers > 0).toBe(turn.gpu != null);
        const noGpuHere = (await probeVulkanDevices()).length === 0 && !fs.existsSync("/proc/driver/nvidia") && process.platform === "linux";
        if (noGpuHere)
            expect(turn).toMatchObject({gpu: null, gpuLayers: 0});
    });

    it("auto remembers where it found to run, per machine, driver and build: the next process runs there without probing again", async () => {
        // Its own record, in the data folder (the tests share one otherwise: test/setup/hermetic.ts).
        const {env, home} = hermeticCliEnv("gpu-auto-remembered", {GGML_VK_VISIBLE_DEVICES: undefined, CLEANROOM_GPU: undefined, CLEANROOM_CACHE_DIR: undefined});
        const chat = async () => {
            const run = await runCliCapturing(["chat", "--model", modelPath!, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"], {env});
            expect(run.code, run.stderr).toBe(0);
            return JSON.parse(run.stdout) as {gpu: string | null, gpuLayers: number};
        };
        const record = path.join(home, "gpu-probe.json");
        const first = await chat();
        const remembered = JSON.parse(fs.readFileSync(record, "utf8")) as {binary: string | false, fingerprint: string};
        expect(remembered.binary).toBe(first.gpu ?? false);
        const probedAt = fs.statSync(record).mtimeMs;
        const second = await chat();
        expect(second).toMatchObject({gpu: first.gpu, gpuLayers: first.gpuLayers});
        expect(fs.statSync(record).mtimeMs).toBe(probedAt); // read, not probed and written again

        // Another machine, driver or build: the fingerprint differs, so auto probes again and records the answer for this one.
        fs.writeFileSync(record, JSON.stringify({...remembered, fingerprint: "another machine"}));
        expect(await chat()).toMatchObject({gpu: first.gpu});
        expect(JSON.parse(fs.readFileSync(record, "utf8")).fingerprint).toBe(remembered.fingerprint);
    });

    it("refuses a --gpu that is not a backend, naming the choices", async () => {
        const run = await cleanroom("gpu-bad", ["chat", "--model", modelPath!, "--prompt", "hi", "--gpu", "nvidia"]);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('--gpu "nvidia" is refused: it must be one of auto, metal, cuda, vulkan, off.');
    });
});

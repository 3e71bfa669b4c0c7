import {GgufInsights, readGgufFileInfo} from "node-llama-cpp";
import {describe, expect, test} from "vitest";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {ModelCatalog} from "../../src/core/node/models/ModelCatalog.js";
import {estimateCatalogFit, estimateModelFit} from "../../src/core/node/models/estimateModelFit.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const GiB = 1024 ** 3;

describe.skipIf(modelPath == null)("hardware fit", () => {
    test("the test model fits this machine with its whole trained context, per node-llama-cpp's GGUF estimates", async () => {
        const llama = await loadLlama();
        const fit = await estimateModelFit(llama, modelPath!);
        const insights = await GgufInsights.from(await readGgufFileInfo(modelPath!), llama);
        const modelRam = insights.estimateModelResourceRequirements({gpuLayers: 0, useMmap: false}).cpuRam;
        const contextRam = insights.estimateContextResourceRequirements({contextSize: 2048, modelGpuLayers: 0, sequences: 1}).cpuRam;

        expect(fit).toMatchObject({basis: "gguf", fitsRam: true, fitsFreeRamNow: true, trainContextSize: 2048, maxContextSize: 2048, minimumContextSize: 2048, gpu: null});
        expect(fit.modelRamBytes).toBe(modelRam);
        expect(fit.ramNeededBytes).toBe(modelRam + contextRam);
        console.info(`test model: weights ${modelRam} B in RAM, + ${contextRam} B for a 2048-token context = ${fit.ramNeededBytes} B; ` +
            `RAM budget ${fit.ramBudgetBytes} B, free now ${fit.freeRamBytes} B`);
    });

    test("a machine with less memory gets a smaller largest context, and none when the model itself does not fit", async () => {
        const llama = await loadLlama();
        const full = await estimateModelFit(llama, modelPath!);
        const tight = await estimateModelFit(llama, modelPath!, {totalRamBytes: full.modelRamBytes + (full.ramNeededBytes - full.modelRamBytes) / 2, reservedRamBytes: 0});
        expect(tight.fitsRam).toBe(false);
        expect(tight.maxContextSize).toBeGreaterThan(0);
        expect(tight.maxContextSize).toBeLessThan(2048);
        expect(tight.maxContextSize % 256).toBe(0);

        const none = await estimateModelFit(llama, modelPath!, {totalRamBytes: 1024, freeRamBytes: 1024, reservedRamBytes: 0});
        expect(none).toMatchObject({fitsRam: false, fitsFreeRamNow: false, maxContextSize: 0});
    });

    test("catalog models without a local file are judged from the catalog's numbers", () => {
        const catalog = ModelCatalog.load();
        const on4GiB = Object.fromEntries(catalog.entries.map((entry) => [entry.id, estimateCatalogFit(entry, {totalRamBytes: 4 * GiB, freeRamBytes: 3 * GiB})]));
        expect(on4GiB["llama-3.2-1b-instruct-q4_k_m"]).toMatchObject({basis: "catalog", fitsRam: true});
        expect(on4GiB["llama-3.2-3b-instruct-q4_k_m"]!.fitsRam).toBe(true);
        expect(on4GiB["qwen2.5-7b-instruct-q4_k_m"]).toMatchObject({fitsRam: false, maxContextSize: 0});

        const qwen = catalog.require("qwen2.5-7b-instruct-q4_k_m");
        const on16GiB = estimateCatalogFit(qwen, {totalRamBytes: 16 * GiB, freeVramBytes: 6 * GiB});
        expect(on16GiB).toMatchObject({fitsRam: true, maxContextSize: 32768});
        expect(on16GiB.gpu).toMatchObject({fitsVram: true});
        expect(on16GiB.gpu!.maxContextSize).toBeLessThan(32768);
        // The catalog's stated need at its reference context is what the estimate adds up to.
        for (const entry of catalog.entries)
            expect(entry.memory.ramBytes).toBe(entry.fileBytes + entry.memory.overheadBytes + entry.memory.kvBytesPerToken * entry.memory.ramContextSize);
    });
});

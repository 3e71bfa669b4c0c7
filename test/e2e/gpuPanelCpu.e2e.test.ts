import {describe, expect, it} from "vitest";
import {showBackend, useGpuApp} from "../helpers/gpuPanelApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

describe.skipIf(!runnable)("the Isolation panel's Backend card with --gpu off, in the real UI", () => {
    const app = useGpuApp(modelPath!, "off", "off");

    it("says the model runs on the CPU, no layer offloaded, the KV read back from RAM", async () => {
        const {shown} = await showBackend(app());
        expect(shown).toContain("Runs on CPU");
        expect(shown).toContain("Layers offloaded 0 / 6");
        expect(shown).toContain("KV read-back from RAM");
        await app().screenshot("01-backend-cpu");
    }, 120_000);
});

import path from "node:path";
import type {Locator, Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeModel} from "../../tools/gguf/makeModel.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const tokenizerFrom = requireTestModel();
const runnable = requireChromium() && tokenizerFrom != null;

const isolation = (page: Page) => page.getByRole("region", {name: "Isolation"});
const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, " ");

/** Web mode on a generated model (written to a temp folder), on the CPU. */
function useApp(label: string, write: (out: string) => void): () => E2eApp {
    let app: E2eApp | undefined;
    beforeAll(async () => {
        const modelPath = path.join(tempDir(`e2e-${label}`), `${label}.gguf`);
        write(modelPath);
        app = await openE2eApp({label, args: ["--model", modelPath, "--gpu", "off"], contextSize: 1024, screenshotPrefix: `arch-${label}-`});
    }, 300_000);
    afterAll(async () => {
        await app?.close();
    });
    return () => app!;
}

async function backendCard(app: E2eApp) {
    await app.page.goto(app.web.url);
    const card = isolation(app.page).getByLabel("Backend", {exact: true});
    await card.waitFor();
    return card;
}

describe.skipIf(!runnable)("the Isolation panel says what kind of state the model keeps, and whether the scrub covers it, in the real UI", () => {
    describe("a hybrid model (lfm2)", () => {
        const app = useApp("lfm2", (out) => makeModel(out, "lfm2", {tokenizerFrom: tokenizerFrom!}));

        it("shows its KV cache and recurrent state, all zeroed and read back", async () => {
            const card = await backendCard(app());
            expect(await text(card)).toContain("Conversation state KV cache and recurrent state (hybrid), all zeroed and read back");
            expect(await card.getAttribute("class")).not.toMatch(/\bfault\b/);
            await app().screenshot("01-hybrid");
        }, 120_000);
    });

    describe("a state the scrub does not understand (gemma3 whose window is its whole context)", () => {
        const app = useApp("gemma3-window", (out) => makeModel(out, "gemma3", {tokenizerFrom: tokenizerFrom!, slidingWindow: 4096}));

        it("shows it NOT all zeroed and read back, with the reason, as a fault", async () => {
            const card = await backendCard(app());
            const shown = await text(card);
            expect(shown).toContain("Conversation state KV cache: NOT all zeroed and read back");
            expect(shown).toContain("gemma3 keeps a KV cache, and its state saved after one token is not kv");
            expect(await card.getAttribute("class")).toMatch(/\bfault\b/);
            await app().screenshot("01-not-covered");
        }, 120_000);
    });
});

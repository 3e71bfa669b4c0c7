import path from "node:path";
import {fileURLToPath} from "node:url";
import type {Locator, Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {forcedDeviceReadBackProblem} from "../helpers/forceDeviceReadBackFault.js";
import {forcedDeviceProbeProblem} from "../helpers/forceDeviceProbeFault.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {requireTestModel} from "../helpers/testModel.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;
/** Skips (with the reason) only where there is no Vulkan device at all; under CI=true that throws instead. */
const vulkan = runnable ? await requireVulkan() : null;
/** `--import`ed into web mode: the proof that the scrub's read-back reads the KV from the device fails. */
const forcedDeviceFault = ["--import", path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/forceDeviceReadBackFault.preload.ts")];
/** `--import`ed into web mode: the GPU device's isolation probe fails. */
const forcedProbeFault = ["--import", path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/forceDeviceProbeFault.preload.ts")];

const isolation = (page: Page) => page.getByRole("region", {name: "Isolation"});
const backendCard = (page: Page) => isolation(page).getByLabel("Backend", {exact: true});
const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, " ");

/**
 * Web mode on the test model with `--gpu <gpu>`. GGML_VK_VISIBLE_DEVICES is removed (this test
 * process set it when it loaded Vulkan), so web mode makes its own device choice, as a user's would.
 */
function openGpuApp(label: string, gpu: string, nodeArgs: string[] = []) {
    return openE2eApp({
        // 1024 tokens: a turn's 512-token reply budget must fit beside its prompt.
        label, args: ["--model", modelPath!, "--gpu", gpu], contextSize: 1024, nodeArgs, screenshotPrefix: `gpu-${label}-`,
        env: {GGML_VK_VISIBLE_DEVICES: undefined, CLEANROOM_GPU: undefined}
    });
}

/** The app for one describe block: opened before its tests, closed after them. */
function useGpuApp(label: string, gpu: string, nodeArgs: string[] = []): () => E2eApp {
    let app: E2eApp | undefined;
    beforeAll(async () => {
        app = await openGpuApp(label, gpu, nodeArgs);
    }, 300_000);
    afterAll(async () => {
        await app?.close();
    });
    return () => app!;
}

/** Opens the page and returns the Backend card and its text, whitespace collapsed. */
async function showBackend(app: E2eApp): Promise<{card: Locator, shown: string}> {
    await app.page.goto(app.web.url);
    const card = backendCard(app.page);
    await card.waitFor();
    return {card, shown: await text(card)};
}

/** One turn in a new conversation, then another new conversation, which ends the first one's session: its scrub is the "Previous session" card. */
async function turnThenEndSession(page: Page): Promise<Locator> {
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    const composer = page.getByRole("textbox", {name: "Message"});
    await expect.poll(() => composer.isEnabled()).toBe(true);
    await composer.fill("Once upon a time");
    await composer.press("Enter");
    const reply = page.getByRole("article", {name: "Assistant message"}).last();
    await reply.waitFor({timeout: 120_000});
    await expect.poll(() => reply.getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
    await expect.poll(() => isolation(page).textContent()).toContain("Tokens used");
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    const previous = isolation(page).getByLabel("Previous session");
    await previous.waitFor();
    return previous;
}

describe.skipIf(!runnable || vulkan == null)(`the Isolation panel's Backend card with --gpu vulkan (${vulkan?.device ?? "no Vulkan device"}), in the real UI`, () => {
    const app = useGpuApp("vulkan", "vulkan");

    it("names the backend, the device and the layers offloaded (all of them), with the KV read-back verified; after a turn the scrub is shown verified", async () => {
        const {card, shown} = await showBackend(app());
        expect(await card.getAttribute("class")).toMatch(/\bok\b/);
        expect(shown).toContain(`Runs on vulkan · ${vulkan!.device}`);
        expect(shown).toContain("Layers offloaded 6 / 6");
        expect(shown).toContain("KV read-back from the device, verified");
        expect(shown).toMatch(/Device check passed the isolation probe \((probed|cached), \d+ ms\)/);
        expect(await card.getByRole("alert").count()).toBe(0);
        await app().screenshot("01-backend");

        const previous = await turnThenEndSession(app().page);
        await expect.poll(() => text(previous)).toContain("✓ Scrub verified");
        expect(await previous.getAttribute("class")).toMatch(/\bok\b/);
        expect(await text(previous)).toMatch(/Bytes zeroed [\d.]+ (KiB|MiB|B)/);
        expect(await text(previous)).toMatch(/Read back [\d.]+ (KiB|MiB|B) · 0 non-zero/);
        await app().screenshot("02-scrub-verified");
    }, 300_000);
});

describe.skipIf(!runnable || vulkan == null)(`forced fault: the device read-back proof fails on --gpu vulkan (${vulkan?.device ?? "no Vulkan device"}), in the real UI`, () => {
    const app = useGpuApp("vulkan-unverified", "vulkan", forcedDeviceFault);

    it("says the device backend could not be verified, and claims no verified scrub for the turn", async () => {
        const {card, shown} = await showBackend(app());
        expect(await card.getAttribute("class")).toMatch(/\bfault\b/);
        expect(shown).toContain(`Runs on vulkan · ${vulkan!.device}`);
        expect(shown).toContain("Layers offloaded 6 / 6");
        expect(shown).toContain("KV read-back from the device: NOT verified");
        expect(await text(card.getByRole("alert"))).toContain(`could not be verified (${forcedDeviceReadBackProblem}): no scrub on this device is reported verified`);
        await app().screenshot("01-backend-unverified");

        const previous = await turnThenEndSession(app().page);
        await expect.poll(() => text(previous)).toContain("✗ Scrub NOT verified");
        expect(await previous.getAttribute("class")).toMatch(/\bfault\b/);
        expect(await text(isolation(app().page))).not.toContain("✓ Scrub verified");
        await app().screenshot("02-scrub-unverified");
    }, 300_000);
});

describe.skipIf(!runnable || vulkan == null)(`forced fault: the device fails its isolation probe on --gpu vulkan (${vulkan?.device ?? "no Vulkan device"}), in the real UI`, () => {
    const app = useGpuApp("vulkan-probe-failed", "vulkan", forcedProbeFault);

    it("says the device failed the probe and why, and that the model runs on the CPU", async () => {
        const {card, shown} = await showBackend(app());
        expect(await card.getAttribute("class")).toMatch(/\bfault\b/);
        expect(shown).toContain("Runs on CPU");
        expect(shown).toContain("Layers offloaded 0 / 6");
        expect(shown).toContain(`Device check ${vulkan!.device}: FAILED, not used (probed,`);
        expect(await text(card.getByRole("alert"))).toContain(
            `The GPU device ${vulkan!.device} failed the isolation probe (${forcedDeviceProbeProblem})`
        );
        expect(await text(card.getByRole("alert"))).toContain("the model runs on the CPU");
        await app().screenshot("01-backend-probe-failed");
    }, 300_000);
});

describe.skipIf(!runnable)("the Isolation panel's Backend card with --gpu off, in the real UI", () => {
    const app = useGpuApp("off", "off");

    it("says the model runs on the CPU, no layer offloaded, the KV read back from RAM", async () => {
        const {shown} = await showBackend(app());
        expect(shown).toContain("Runs on CPU");
        expect(shown).toContain("Layers offloaded 0 / 6");
        expect(shown).toContain("KV read-back from RAM");
        await app().screenshot("01-backend-cpu");
    }, 120_000);
});

import path from "node:path";
import {fileURLToPath} from "node:url";
import type {Locator, Page} from "playwright-core";
import {describe, expect, it} from "vitest";
import {forcedDeviceReadBackProblem} from "../helpers/forceDeviceReadBackFault.js";
import {forcedDeviceProbeProblem} from "../helpers/forceDeviceProbeFault.js";
import {isolation, shortReplies, showBackend, text, useGpuApp} from "../helpers/gpuPanelApp.js";
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

/** One turn in the conversation of short replies, then a new conversation, which ends the first one's session: its scrub is the "Previous session" card. */
async function turnThenEndSession(page: Page): Promise<Locator> {
    await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: new RegExp(`^${shortReplies.title}`)}).click();
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
    const app = useGpuApp(modelPath!, "vulkan", "vulkan");

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
    const app = useGpuApp(modelPath!, "vulkan-unverified", "vulkan", forcedDeviceFault);

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
    const app = useGpuApp(modelPath!, "vulkan-probe-failed", "vulkan", forcedProbeFault);

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

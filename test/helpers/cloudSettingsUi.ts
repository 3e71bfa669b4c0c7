import type {Page} from "playwright-core";
import {expect} from "vitest";
import type {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";

/** In the app's Settings: the cloud simulator as the endpoint (with its model and `apiKey`), Cloud fallback on; Settings closed again. */
export async function setCloudSimulatorInSettings(page: Page, sim: SharedCloudSimulator, apiKey: string) {
    await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
    const settings = page.getByRole("dialog", {name: "Settings"});
    await settings.getByRole("textbox", {name: "Cloud endpoint"}).fill(sim.url);
    await settings.getByRole("textbox", {name: "Cloud model"}).fill(sim.modelName);
    await settings.getByLabel("API key", {exact: true}).fill(apiKey);
    await settings.getByRole("button", {name: "Save"}).click();
    await expect.poll(() => settings.getByLabel("API key", {exact: true}).getAttribute("placeholder")).toContain("stored");
    const fallback = settings.getByRole("switch", {name: "Cloud fallback"});
    await fallback.click();
    await expect.poll(() => fallback.getAttribute("aria-checked")).toBe("true");
    await page.getByRole("button", {name: "Close settings"}).click();
}

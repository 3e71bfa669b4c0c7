import fs from "node:fs";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {RangeServer} from "../helpers/rangeServer.js";
import {askWebMode, startWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {testCatalogEntry, writeTestCatalog} from "../helpers/testCatalog.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

// The catalog's embedding model is the (llama-architecture) test model under another name: what is
// checked here is the choice and its persistence, not the quality of its vectors.
const embedderName = "Tiny embedder";

let app: E2eApp;
let server: RangeServer;
let page: Page;
let home: string;
let webArgs: string[];

const settingsDialog = () => page.getByRole("dialog", {name: "Settings"});
const searchMode = () => settingsDialog().getByRole("status", {name: "Document search mode"});
const embeddingSelect = () => settingsDialog().getByRole("combobox", {name: "Embedding model"});
const resumeSwitch = () => settingsDialog().getByRole("switch", {name: "Resume snapshots"});
const snapshotCap = () => settingsDialog().getByRole("textbox", {name: "Largest snapshot (MiB)"});
const coreSettings = () => askWebMode(app.web, (client) => client.call("settings.get", {}));

async function openSettings() {
    await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
    await settingsDialog().waitFor();
}

async function closeSettings() {
    await settingsDialog().getByRole("button", {name: "Close settings"}).click();
    await settingsDialog().waitFor({state: "detached"});
}

/** Web mode stopped and started again on the same database and models folder; the page reloaded. */
async function restartCore() {
    await app.web.stop();
    app.web = await startWebMode(webArgs, {CLEANROOM_HOME: home, CLEANROOM_MODEL: ""});
    await page.goto(app.web.url);
    await page.getByRole("textbox", {name: "Message"}).waitFor();
}

/** Settings → Document search and Settings → Resume snapshots (#23 item 4, #25 item 4), in the real UI against web mode. */
describe.skipIf(!runnable)("document search and resume snapshot settings in Chromium", () => {
    beforeAll(async () => {
        home = tempDir("e2e-search-settings");
        const modelsDir = path.join(home, "models-folder");
        server = await RangeServer.start({files: {"embedder.gguf": fs.readFileSync(modelPath!)}});
        const catalogPath = writeTestCatalog(path.join(home, "catalog"), [
            {...testCatalogEntry({id: "tiny-embedder", name: embedderName, url: server.url("embedder.gguf"), fileName: "embedder.gguf"}), purpose: "embedding"}
        ]);
        const args = ["--model", modelPath!, "--models-dir", modelsDir, "--catalog", catalogPath, "--allow-loopback-downloads"];
        app = await openE2eApp({label: "e2e-search-settings", home, args});
        webArgs = [...args, "--db", app.database, "--threads", "1", "--context-size", "2048"];
        page = app.page;
        await page.goto(app.web.url);
        await page.getByRole("textbox", {name: "Message"}).waitFor();
    }, 240_000);

    afterAll(async () => {
        await app?.close();
        await server?.close();
    });

    it("downloads the catalog's embedding model, chooses it (kept through reopening Settings and a restart), and None goes back to keyword only", async () => {
        await openSettings();
        await expect.poll(() => searchMode().textContent()).toMatch(/^Keyword only \(BM25\)/);
        expect(await embeddingSelect().inputValue()).toBe("");

        await settingsDialog().getByRole("button", {name: `Download ${embedderName}`}).click();
        // Downloaded, verified and registered: the model is offered among the embedding models, and no longer for download.
        const offered = embeddingSelect().locator("optgroup[label='Embedding models'] option", {hasText: embedderName});
        await offered.waitFor({state: "attached"});
        await settingsDialog().getByRole("button", {name: `Download ${embedderName}`}).waitFor({state: "detached"});
        const embedderPath = await offered.getAttribute("value");
        expect(embedderPath).toBe(path.join(home, "models-folder", "embedder.gguf"));

        await embeddingSelect().selectOption({label: embedderName});
        await expect.poll(() => searchMode().textContent()).toBe(`Keyword + meaning (embeddings): passages are found by their words and by what they mean, with ${embedderName}.`);
        expect((await coreSettings()).embeddingModelPath).toBe(embedderPath);

        await closeSettings();
        await openSettings();
        expect(await embeddingSelect().inputValue()).toBe(embedderPath);
        expect(await searchMode().textContent()).toMatch(/^Keyword \+ meaning/);
        await closeSettings();

        await restartCore();
        await openSettings();
        await expect.poll(() => embeddingSelect().inputValue()).toBe(embedderPath);
        expect(await searchMode().textContent()).toMatch(/^Keyword \+ meaning/);

        await embeddingSelect().selectOption({label: "None (keyword search only)"});
        await expect.poll(() => searchMode().textContent()).toMatch(/^Keyword only \(BM25\)/);
        expect((await coreSettings()).embeddingModelPath).toBeNull();
        await closeSettings();
        await openSettings();
        expect(await embeddingSelect().inputValue()).toBe("");
        expect(await searchMode().textContent()).toMatch(/^Keyword only/);
        await closeSettings();
    }, 240_000);

    it("turning resume snapshots off and setting their size cap are kept through reopening Settings and a restart", async () => {
        await openSettings();
        expect(await settingsDialog().getByRole("group", {name: "Resume snapshots"}).textContent())
            .toContain("saved encrypted, for that conversation only");
        expect(await resumeSwitch().getAttribute("aria-checked")).toBe("true");
        expect(await snapshotCap().inputValue()).toBe("512");

        await snapshotCap().fill("0");
        expect(await settingsDialog().getByRole("button", {name: "Set", exact: true}).isDisabled()).toBe(true);
        await settingsDialog().getByText("A whole number of MiB, from 1 to 65536.").waitFor();
        await snapshotCap().fill("64");
        await settingsDialog().getByRole("button", {name: "Set", exact: true}).click();
        await expect.poll(async () => (await coreSettings()).resumeSnapshotMaxMiB).toBe(64);

        await resumeSwitch().click();
        await expect.poll(() => resumeSwitch().getAttribute("aria-checked")).toBe("false");
        expect((await coreSettings()).resumeSnapshots).toBe(false);
        await closeSettings();
        await openSettings();
        expect(await resumeSwitch().getAttribute("aria-checked")).toBe("false");
        await closeSettings();

        await restartCore();
        await openSettings();
        await expect.poll(() => resumeSwitch().getAttribute("aria-checked")).toBe("false");
        expect(await snapshotCap().inputValue()).toBe("64");

        await resumeSwitch().click();
        await expect.poll(() => resumeSwitch().getAttribute("aria-checked")).toBe("true");
        expect((await coreSettings()).resumeSnapshots).toBe(true);
        await closeSettings();
    }, 240_000);
});

import fs from "node:fs";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {buildFakeAppHome} from "../helpers/fakeAppHome.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {RangeServer} from "../helpers/rangeServer.js";
import {tempDir} from "../helpers/tempCore.js";
import {testCatalogEntry, writeTestCatalog} from "../helpers/testCatalog.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

let app: E2eApp;
let server: RangeServer;
let page: Page;
let modelsDir: string;
let appsHome: string;
const screenshot = (name: string) => app.screenshot(name);

const modelsPage = () => page.getByRole("main", {name: "Models"});
const card = (name: string) => modelsPage().getByRole("article", {name});
const registered = () => modelsPage().getByRole("list", {name: "Registered models"});

/**
 * From zero to an offline chat without a terminal: web mode starts with no model and an empty
 * models folder; the catalog's entries point at a local, throttled HTTP server that serves the
 * test model. First run → Models → Download (the bar advances) → Make default → the chat opens
 * and a reply streams. A wrong checksum is refused with a banner; a model Ollama already has is
 * found and registered in place with Use.
 */
describe.skipIf(!runnable)("the Models view in Chromium against web mode", () => {
    beforeAll(async () => {
        const home = tempDir("models-e2e-home");
        modelsDir = path.join(home, "models-folder");
        appsHome = buildFakeAppHome(tempDir("models-e2e-apps"), modelPath!, "linux").home;
        // 16 KiB every 60 ms: the 1.2 MB download lasts about 4 s, long enough to watch the bar move.
        server = await RangeServer.start({files: {"stories260K.gguf": fs.readFileSync(modelPath!)}, writeBytes: 16 * 1024, writeDelayMs: 60});
        const catalogPath = writeTestCatalog(path.join(home, "catalog"), [
            testCatalogEntry({id: "stories-260k", name: "Stories 260K", url: server.url("stories260K.gguf"), fileName: "stories260K.gguf"}),
            testCatalogEntry({id: "stories-bad-checksum", name: "Stories (bad checksum)", url: server.url("stories260K.gguf"),
                fileName: "stories-bad.gguf", sha256: "0".repeat(64)})
        ]);
        app = await openE2eApp({
            label: "models-e2e-home", home, args: ["--no-model", "--models-dir", modelsDir, "--catalog", catalogPath, "--allow-loopback-downloads"],
            // The fake home holds the other apps' folders; nothing of the real environment's model folders leaks in.
            env: {HOME: appsHome, XDG_DATA_HOME: undefined, XDG_CONFIG_HOME: undefined, OLLAMA_MODELS: undefined},
            screenshotPrefix: "models-", fullPage: true
        });
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
        await server?.close();
    });

    it("first run → Models: the catalog with size, licence, fit and largest context", async () => {
        await page.goto(app.web.url);
        await page.getByRole("heading", {name: "Choose a local model"}).waitFor();
        await screenshot("01-first-run");

        await page.getByRole("button", {name: "Browse models"}).click();
        const stories = card("Stories 260K");
        await stories.waitFor();
        const text = await stories.textContent();
        expect(text).toContain("Fits this machine");
        expect(text).toContain("MIT");
        expect(text).toMatch(/1\.1 MiB/);
        expect(text).toMatch(/Largest context\s*2,048 tokens/);
        await expect.poll(() => registered().count()).toBe(0);
        await modelsPage().getByText("None yet").waitFor();
        await screenshot("02-catalog");
    });

    it("downloads with a real progress bar that advances, then offers the verified model", async () => {
        const stories = card("Stories 260K");
        await stories.getByRole("button", {name: "Download Stories 260K"}).click();
        const bar = stories.getByRole("progressbar", {name: "Download progress"});
        await bar.waitFor();

        // Two phases on one bar: the transfer, then the SHA-256 check (which counts from 0 again).
        const seen = {downloading: [] as number[], verifying: [] as number[]};
        let shot = false;
        while (await bar.isVisible()) {
            // The bar can go between the reads; a missing attribute is not a 0.
            const [now, label] = await Promise.all([
                bar.getAttribute("aria-valuenow", {timeout: 1000}).catch(() => null),
                bar.getAttribute("aria-valuetext", {timeout: 1000}).catch(() => null)
            ]);
            const value = now == null ? Number.NaN : Number(now);
            const phase = label?.startsWith("Verifying") ? seen.verifying : seen.downloading;
            if (Number.isFinite(value) && label != null && value !== phase.at(-1))
                phase.push(value);
            if (!shot && phase === seen.downloading && value >= 25 && value <= 85) {
                shot = true;
                await screenshot("03-downloading");
                expect(await stories.textContent()).toMatch(/\/s/); // the speed is shown
            }
            await page.waitForTimeout(100);
        }
        // The bar moved forward several times, and never backwards within a phase.
        const forward = (values: number[]) => values.every((value, index) => index === 0 || value > values[index - 1]!);
        expect(seen.downloading.length).toBeGreaterThanOrEqual(3);
        expect(forward(seen.downloading), `downloading: ${seen.downloading.join(", ")}`).toBe(true);
        expect(forward(seen.verifying), `verifying: ${seen.verifying.join(", ")}`).toBe(true);
        expect(seen.downloading.some((value) => value > 0 && value < 100)).toBe(true);
        expect(shot).toBe(true);

        await stories.getByRole("button", {name: "Make Stories 260K the default"}).waitFor();
        await registered().getByText("Stories 260K").waitFor();
        expect(fs.existsSync(path.join(modelsDir, "stories260K.gguf"))).toBe(true);
        await screenshot("04-downloaded");
    });

    it("a wrong SHA-256 shows a checksum error banner and no model is offered", async () => {
        const bad = card("Stories (bad checksum)");
        await bad.getByRole("button", {name: "Download Stories (bad checksum)"}).click();
        const banner = page.getByRole("alert").filter({hasText: "checksum"});
        await banner.waitFor();
        expect(await banner.textContent()).toContain("was deleted");
        await bad.getByRole("button", {name: "Download Stories (bad checksum)"}).filter({hasText: "Try again"}).waitFor();
        expect(await bad.getByRole("button", {name: /the default/}).count()).toBe(0);
        expect(await registered().getByRole("listitem").count()).toBe(1);
        expect(fs.readdirSync(modelsDir).filter((name) => name.startsWith("stories-bad"))).toEqual([]);
        await screenshot("05-checksum-error");
        await banner.getByRole("button", {name: /Dismiss/}).click();
    });

    it("Make default loads the model and the chat opens; a reply streams", async () => {
        await card("Stories 260K").getByRole("button", {name: "Make Stories 260K the default"}).click();
        await page.getByRole("button", {name: "New conversation", exact: true}).click();
        const composer = page.getByRole("textbox", {name: "Message"});
        await expect.poll(() => composer.isEnabled()).toBe(true);
        await composer.fill("Once upon a time there was a little fox.");
        await composer.press("Enter");

        const reply = page.getByRole("article", {name: "Assistant message"}).last();
        await expect.poll(async () => (await reply.textContent())?.length ?? 0, {timeout: 30_000}).toBeGreaterThan(30);
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        await screenshot("06-chat-reply");

        const registry = JSON.parse(fs.readFileSync(path.join(modelsDir, "registry.json"), "utf8")) as {defaultModel: string};
        expect(registry.defaultModel).toBe("stories-260k");
    });

    it("Settings → Models finds the model Ollama downloaded, and Use registers it in place", async () => {
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
        await page.getByRole("dialog", {name: "Settings"}).getByRole("button", {name: "Models…"}).click();
        await registered().getByText("Default", {exact: true}).waitFor();
        expect(await registered().textContent()).toContain("Loaded");

        const found = modelsPage().getByRole("list", {name: "Models found on this computer"});
        const ollama = found.getByRole("listitem").filter({hasText: "stories:260k"});
        await ollama.waitFor();
        expect(await ollama.textContent()).toContain("Ollama");
        expect(await found.getByRole("listitem").filter({hasText: "LM Studio"}).count()).toBeGreaterThan(0);
        await screenshot("07-detected");

        await ollama.getByRole("button", {name: "Use stories:260k"}).click();
        await ollama.getByText("Added").waitFor();
        const row = registered().getByRole("listitem").filter({hasText: "stories:260k"});
        await row.waitFor();
        expect(await row.textContent()).toContain("From Ollama");
        const blob = path.join(appsHome, ".ollama", "models", "blobs");
        expect(await row.textContent()).toContain(blob);
        const registry = JSON.parse(fs.readFileSync(path.join(modelsDir, "registry.json"), "utf8")) as {models: Array<{path: string, origin: string}>};
        expect(registry.models.find((model) => model.origin === "ollama")!.path.startsWith(blob)).toBe(true);
        await screenshot("08-used-from-ollama");

        // Import: a relative path is refused with a banner; a full path is registered in place.
        const pathField = modelsPage().getByRole("textbox", {name: "GGUF file path"});
        await pathField.fill("stories260K.gguf");
        await modelsPage().getByRole("button", {name: "Import"}).click();
        const refused = page.getByRole("status").filter({hasText: "absolute path"});
        await refused.waitFor();
        await refused.getByRole("button", {name: /Dismiss/}).click();
        await pathField.fill(modelPath!);
        await modelsPage().getByRole("button", {name: "Import"}).click();
        const imported = registered().getByRole("listitem").filter({hasText: "Imported"});
        await imported.waitFor();
        expect(await imported.textContent()).toContain(modelPath!);
        expect(await pathField.inputValue()).toBe("");
        await screenshot("09-imported");

        await modelsPage().getByRole("button", {name: "← Back"}).click();
        await page.getByRole("textbox", {name: "Message"}).waitFor();
    });
});

import OpenAI from "openai";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {openAiStatusOf} from "../helpers/openAiStatusOf.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

function chat(baseURL: string, apiKey: string) {
    return new OpenAI({baseURL, apiKey, maxRetries: 0}).chat.completions.create({
        model: "stories260K", messages: [{role: "user", content: "Once upon a time"}], temperature: 0, max_tokens: 12
    });
}

/** Settings → Local API server in the real UI: the app's loaded model served to another program (the official openai SDK). */
describe.skipIf(!runnable)("the local API server in the app", () => {
    let app: E2eApp;
    let page: Page;

    beforeAll(async () => {
        app = await openE2eApp({label: "e2e-api-server", args: ["--model", modelPath!]});
        page = app.page;
        await app.browser.grantPermissions(["clipboard-read", "clipboard-write"]);
        await page.goto(app.web.url);
        // The model is loaded once the Isolation panel shows where it runs.
        await page.getByLabel("Backend").waitFor();
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("is switched on in Settings with a new key; the openai SDK is answered with that key and refused (401) with a wrong one; the request shows under the key's label in the Isolation panel", async () => {
        await page.getByRole("button", {name: "Settings", exact: true}).click();
        const section = page.getByRole("group", {name: "Local API server"});
        const serverSwitch = section.getByRole("switch", {name: "Local API server"});
        expect(await serverSwitch.getAttribute("aria-checked")).toBe("false");
        await expect.poll(() => section.getByText("Would serve stories260K").count()).toBe(1);

        // A key: shown once, with a copy button.
        await section.getByRole("textbox", {name: "New key label"}).fill("my editor");
        await section.getByRole("button", {name: "Create key"}).click();
        const newKey = section.getByRole("textbox", {name: "New key", exact: true});
        await newKey.waitFor();
        const key = await newKey.inputValue();
        expect(key).toMatch(/^crk-[A-Za-z0-9_-]{43}$/);
        await section.getByLabel("New API key").getByRole("button", {name: "Copy"}).click();
        await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(key);
        await section.getByRole("button", {name: "Done"}).click();
        await expect.poll(() => newKey.count()).toBe(0);
        expect(await section.getByLabel("API key my editor").count()).toBe(1);

        // On, on a free port: the base URL to copy is the one it listens on.
        await section.getByRole("spinbutton", {name: "Port"}).fill("0");
        await serverSwitch.click();
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("true");
        const baseUrl = await section.getByRole("textbox", {name: "Base URL"}).inputValue();
        expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/v1$/);
        await section.getByLabel("Base URL").locator("..").getByRole("button", {name: "Copy"}).click();
        await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(baseUrl);

        expect(await section.getByRole("textbox", {name: "Model name"}).inputValue()).toBe("stories260K");
        await section.getByLabel("Model name").locator("..").getByRole("button", {name: "Copy"}).click();
        await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe("stories260K");
        await app.screenshot("local-api-server-settings");
        const models = await new OpenAI({baseURL: baseUrl, apiKey: key, maxRetries: 0}).models.list();
        expect(models.data.map((model) => model.id)).toEqual(["stories260K"]);
        const reply = await chat(baseUrl, key);
        expect(reply.choices[0]!.message.content!.length).toBeGreaterThan(0);
        expect(await openAiStatusOf(chat(baseUrl, key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")))).toBe(401);
        expect(await openAiStatusOf(chat(baseUrl, "no-key"))).toBe(401);

        // The key's id, shown beside its label in Settings, names it in the Isolation panel too.
        const [keyInfo] = (await askWebMode(app.web, (client) => client.call("apiKeys.list", {}))).keys;
        expect(await section.getByLabel("API key my editor").textContent()).toContain(`id ${keyInfo!.id.slice(0, 8)}…`);
        await page.getByRole("button", {name: "Close settings"}).click();
        const session = page.getByRole("region", {name: "Isolation"}).getByLabel("API sessions").getByLabel(`API session my editor (key ${keyInfo!.id})`);
        await session.waitFor();
        await expect.poll(() => session.textContent()).toMatch(/chat completion · answered[\s\S]*Keyid [0-9a-f]{8}…[\s\S]*✓ verified/);
        expect(await session.textContent()).toContain(`id ${keyInfo!.id.slice(0, 8)}…`);
        await app.screenshot("local-api-server-isolation");

        // Revoked in Settings: refused from the next request on, the server still running.
        await page.getByRole("button", {name: "Settings", exact: true}).click();
        // Revoking cannot be undone: it asks once more, and Cancel keeps the key.
        await section.getByLabel("API key my editor").getByRole("button", {name: "Revoke"}).click();
        await section.getByRole("button", {name: "Cancel"}).click();
        expect((await chat(baseUrl, key)).choices[0]!.message.content!.length).toBeGreaterThan(0);
        await section.getByLabel("API key my editor").getByRole("button", {name: "Revoke"}).click();
        await section.getByRole("group", {name: "Revoke my editor?"}).getByRole("button", {name: "Yes, revoke"}).click();
        await expect.poll(() => section.getByLabel("API key my editor").count()).toBe(0);
        expect(await section.getByText("The key “my editor” is revoked: requests that send it are refused from now on.").count()).toBe(1);
        expect(await openAiStatusOf(chat(baseUrl, key))).toBe(401);
        expect(await section.getByText("Every key is revoked: it refuses every request").count()).toBe(1);

        // Off: nothing listens any more.
        await serverSwitch.click();
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("false");
        await expect(fetch(`${baseUrl}/models`)).rejects.toThrow();
    });
});

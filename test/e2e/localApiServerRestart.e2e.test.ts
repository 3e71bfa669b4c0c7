import net from "node:net";
import OpenAI from "openai";
import type {Locator} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {startWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** Listens on 127.0.0.1:`port` as another program would, so that the app finds it taken. */
async function occupy(port: number): Promise<net.Server> {
    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => blocker.once("error", reject).listen(port, "127.0.0.1", resolve));
    return blocker;
}

/** Settings → Local API server across restarts of web mode on the same home folder and database (the app quit and started again). */
describe.skipIf(!runnable)("the local API server's on/off state across restarts of the app", () => {
    const home = tempDir("e2e-api-restart");
    let app: E2eApp;
    let blocker: net.Server | null = null;

    beforeAll(async () => {
        app = await openE2eApp({label: "e2e-api-restart", home, args: ["--model", modelPath!]});
        await openApp();
    }, 240_000);

    afterAll(async () => {
        blocker?.close();
        await app?.close();
    });

    async function openApp() {
        await app.page.goto(app.web.url);
        // The model is loaded once the Isolation panel shows where it runs.
        await app.page.getByLabel("Backend").waitFor();
    }

    /** Web mode stopped (every request scrubbed, the server closed as at quit) and started again on the same database. */
    async function restartApp() {
        await app.web.stop();
        app.web = await startWebMode(["--model", modelPath!, "--db", app.database, "--threads", "1", "--context-size", "2048"], {CLEANROOM_HOME: home, CLEANROOM_MODEL: ""});
        await openApp();
    }

    async function openServerSettings(): Promise<{section: Locator, serverSwitch: Locator}> {
        await app.page.getByRole("button", {name: "Settings", exact: true}).click();
        const section = app.page.getByRole("group", {name: "Local API server"});
        return {section, serverSwitch: section.getByRole("switch", {name: "Local API server"})};
    }

    function chat(baseURL: string, apiKey: string) {
        return new OpenAI({baseURL, apiKey, maxRetries: 0}).chat.completions.create({
            model: "stories260K", messages: [{role: "user", content: "Once upon a time"}], temperature: 0, max_tokens: 8
        });
    }

    it("turned on, it is on again after a restart on the same port with the same key; a taken port is shown in the panel; turned off, it stays off", async () => {
        let {section, serverSwitch} = await openServerSettings();
        await section.getByRole("textbox", {name: "New key label"}).fill("script");
        await section.getByRole("button", {name: "Create key"}).click();
        const key = await section.getByRole("textbox", {name: "New key", exact: true}).inputValue();
        await section.getByRole("spinbutton", {name: "Port"}).fill("0");
        await serverSwitch.click();
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("true");
        const baseUrl = await section.getByRole("textbox", {name: "Base URL"}).inputValue();
        const port = Number(new URL(baseUrl).port);
        expect((await chat(baseUrl, key)).choices[0]!.message.content!.length).toBeGreaterThan(0);

        // Quit and start again: on, on the port it had (0 picked it once; it is kept), and the key still opens it.
        await restartApp();
        ({section, serverSwitch} = await openServerSettings());
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("true");
        expect(await section.getByRole("textbox", {name: "Base URL"}).inputValue()).toBe(baseUrl);
        expect(await section.getByLabel("Endpoints").textContent()).toBe("Endpoints: GET /v1/models, POST /v1/chat/completions, POST /v1/completions, POST /v1/embeddings");
        expect((await chat(baseUrl, key)).choices[0]!.message.content!.length).toBeGreaterThan(0);

        // Another program took the port while the app was closed: the panel says so, the switch is off.
        await app.web.stop();
        blocker = await occupy(port);
        app.web = await startWebMode(["--model", modelPath!, "--db", app.database, "--threads", "1", "--context-size", "2048"], {CLEANROOM_HOME: home, CLEANROOM_MODEL: ""});
        await openApp();
        ({section, serverSwitch} = await openServerSettings());
        const problem = section.getByRole("alert");
        await expect.poll(() => problem.textContent()).toContain(
            `It was on when Cleanroom last closed, but could not start again: Port ${port} on 127.0.0.1 is already in use by another program: ` +
            "choose another port for it in Settings → Local API server (0 picks a free one).");
        expect(await serverSwitch.getAttribute("aria-checked")).toBe("false");
        await problem.scrollIntoViewIfNeeded();
        await app.screenshot("local-api-server-port-taken");

        // The port free again, the user turns it on: it runs there.
        await new Promise((resolve) => blocker!.close(resolve));
        blocker = null;
        await serverSwitch.click();
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("true");
        expect(await problem.count()).toBe(0);
        expect((await chat(baseUrl, key)).choices[0]!.message.content!.length).toBeGreaterThan(0);

        // Turned off, it stays off after a restart: nothing listens on its port.
        await serverSwitch.click();
        await expect.poll(() => serverSwitch.getAttribute("aria-checked")).toBe("false");
        await restartApp();
        ({section, serverSwitch} = await openServerSettings());
        await expect.poll(() => section.getByText("Would serve stories260K").count()).toBe(1);
        expect(await serverSwitch.getAttribute("aria-checked")).toBe("false");
        await expect(fetch(`${baseUrl}/models`)).rejects.toThrow();
    });
});

import path from "node:path";
import {fileURLToPath} from "node:url";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {forcedScrubFailure} from "../helpers/forceScrubFault.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {newConversationTurn} from "../helpers/newConversationTurn.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;
/** FORCED FAULT: every scrub in web mode's core process reports that it could not be verified (the core process is forked with web mode's `--import`s). */
const forcedFault = ["--import", path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/forceScrubFault.preload.ts")];

let app: E2eApp;
let page: Page;

describe.skipIf(!runnable)("a scrub fault of a session no call waited for, in the real UI", () => {
    beforeAll(async () => {
        app = await openE2eApp({label: "e2e-scrub-fault", args: ["--model", modelPath!], nodeArgs: forcedFault, screenshotPrefix: "scrub-fault-"});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("forced fault: a session ended by another model load (not by the page) shows the security fault banner", async () => {
        await page.goto(app.web.url);
        await newConversationTurn(page, "Tell me a story about a brave little dragon.");
        const banner = page.getByRole("alert").filter({hasText: "Security fault: a scrub could not be verified"});
        expect(await banner.count()).toBe(0);

        // Another client loads the model again: the page's session ends with no call of the page waiting for it.
        await askWebMode(app.web, (client) => client.call("model.load", {path: modelPath!, remember: false}));
        await banner.waitFor();
        expect(await banner.textContent()).toContain(`could not be verified (${forcedScrubFailure})`);
        await app.screenshot("background-fault-banner");
    });
});

import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {settingKeys} from "../../src/core/node/settings/settingKeys.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {longText} from "../helpers/documentFixtures.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {writeSyntheticBert} from "../helpers/syntheticBert.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

const sedanSentence = "The sedan was left by the old mill.";

let app: E2eApp;
let page: Page;

const composer = () => page.getByRole("textbox", {name: "Message"});
const lastReply = () => page.getByRole("article", {name: "Assistant message"}).last();
const sources = () => lastReply().getByRole("navigation", {name: "Sources"});
const auditTrail = () => page.getByRole("region", {name: "Isolation"}).getByRole("list", {name: "Audit trail"});

/** The synthetic BERT (written by the test) chosen as the embedding model before the app starts; stories260K chats, in a 1024-token context (half of it the reply budget), so that the document is retrieved, not given whole. */
describe.skipIf(!runnable)("documents retrieved by meaning with a BERT embedding model, in the real UI (#23)", () => {
    beforeAll(async () => {
        const home = tempDir("e2e-bert-home");
        const settingUp = openTestCore(async () => {
            throw new Error("choosing the embedding model needs no model");
        }, {database: path.join(home, "e2e.db")});
        servicesOf(settingUp).settings.set(settingKeys.documents.embeddingModelPath, writeSyntheticBert());
        await settingUp.dispose();
        app = await openE2eApp({label: "e2e-bert", home, args: ["--model", modelPath!], contextSize: 1024, screenshotPrefix: "bert-"});
        page = app.page;
        await page.goto(app.web.url);
        await page.getByRole("button", {name: "New conversation", exact: true}).waitFor({timeout: 180_000});
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("a question sharing no word with the document cites the passage that means it first, and the Isolation panel shows the embedding context's scrub: no KV memory, read back empty", async () => {
        await page.getByRole("button", {name: "New conversation", exact: true}).click();
        await composer().fill("Where is my automobile?");
        await page.getByLabel("Files to attach").setInputFiles([{name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from(longText(80, sedanSentence, 60, 7))}]);
        const chips = page.getByRole("form", {name: "Composer"}).getByRole("list", {name: "Attachments"}).getByRole("listitem");
        await expect.poll(() => chips.evaluateAll((items) => items.length > 0 && items.every((item) => item.getAttribute("aria-busy") !== "true")), {timeout: 60_000}).toBe(true);
        await page.getByRole("button", {name: "Send", exact: true}).click();
        await expect.poll(() => lastReply().getAttribute("data-status"), {timeout: 120_000}).toBe("complete");

        await expect.poll(() => sources().getByRole("button").count()).toBeGreaterThan(0);
        await sources().getByRole("button").first().click();
        const passage = page.getByRole("dialog", {name: "notes.txt, page 1"});
        await expect.poll(() => passage.textContent()).toContain(sedanSentence);
        await page.keyboard.press("Escape");
        await passage.waitFor({state: "detached"});

        const embeddingScrub = auditTrail().getByRole("listitem").filter({hasText: "purpose embedding"});
        await expect.poll(() => embeddingScrub.allTextContents(), {timeout: 10_000})
            .toEqual([expect.stringMatching(/Scrub verifiedcontextId embed-[0-9a-f]{2}.* · purpose embedding · method no-kv-memory · reason request · bytesZeroed 0$/)]);
        // The Last scrub card: the embedding context's, which had nothing to zero and read back an empty state.
        expect(await page.getByRole("region", {name: "Isolation"}).textContent())
            .toMatch(/Last scrub✓ Scrub verifiedBytes zeroednone: no KV memoryRead backstate emptyContextembed-/);
        await app.screenshot("01-embedding-scrub");
    });
});

import fs from "node:fs";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {decryptedRows} from "../helpers/decryptedRows.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {startWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {seriousAxeViolations} from "../helpers/uxChecks.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** Whether `text` is in the raw bytes of the database, its WAL or its shared-memory index. */
function inDatabaseFiles(database: string, text: string): boolean {
    return ["", "-wal", "-shm"].map((suffix) => database + suffix).filter((file) => fs.existsSync(file))
        .some((file) => fs.readFileSync(file).includes(text));
}

/** Whether any row of any ordinary table holds `text`, read through the store's key. */
const inDecryptedRows = (database: string, text: string) => decryptedRows(database).some((table) => table.json.includes(text));

/** #11: incognito conversations in the real UI (web mode, Chromium, the real model, a real encrypted SQLite file). */
describe.skipIf(!runnable)("incognito conversations in the real UI", () => {
    let app: E2eApp;
    let page: Page;
    let home: string;
    const sidebar = () => page.getByRole("navigation", {name: "Conversations"});
    const composer = () => page.getByRole("textbox", {name: "Message"});
    const notice = () => page.getByRole("note").filter({hasText: "Nothing of this conversation is written to disk"});

    async function send(text: string) {
        await expect.poll(() => composer().isEnabled()).toBe(true);
        await composer().fill(text);
        await composer().press("Enter");
        await page.getByRole("article", {name: "Your message"}).filter({hasText: text}).waitFor({timeout: 30_000});
        await expect.poll(() => page.getByRole("article", {name: "Assistant message"}).last().getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
    }

    beforeAll(async () => {
        home = tempDir("e2e-incognito");
        app = await openE2eApp({label: "e2e-incognito", home, args: ["--model", modelPath!], env: {TMPDIR: home}, screenshotPrefix: "incognito-"});
        page = app.page;
        await page.goto(app.web.url);
        await composer().waitFor();
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("starts from the button, is marked in the list and the chat, keeps its text off the disk, and ends with the core", async () => {
        const stored = "Stored5521Heron";
        const secret = "Hidden8830Lynx";
        await send(`Remember ${stored}. Once upon a time`);
        expect(await notice().count(), "an ordinary conversation has no incognito notice").toBe(0);

        await sidebar().getByRole("button", {name: "New incognito conversation"}).click();
        await notice().waitFor();
        await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Message");
        await send(`Remember ${secret}. Once upon a time`);
        const marked = sidebar().getByRole("button", {name: /Incognito/}).filter({hasText: "Remember " + secret});
        await marked.waitFor();
        expect(await sidebar().getByRole("button", {name: /^Remember Stored5521Heron.*Local only$/}).filter({hasNotText: "Incognito"}).count()).toBe(1);
        await app.screenshot("01-incognito-open");
        expect(await seriousAxeViolations(page), "axe: incognito chat").toEqual([]);

        // On disk: the stored conversation's prompt is in the database (decrypted), the incognito one's nowhere.
        await expect.poll(() => inDecryptedRows(app.database, stored), {timeout: 10_000}).toBe(true);
        expect(inDecryptedRows(app.database, secret)).toBe(false);
        expect(inDatabaseFiles(app.database, secret)).toBe(false);

        // A reload of the page (the same core): still there, still marked.
        await page.reload();
        await marked.click();
        await notice().waitFor();
        expect(await page.getByRole("article", {name: "Your message"}).filter({hasText: secret}).count()).toBe(1);

        // The shortcut opens another one (Alt+Shift+N in a browser tab, where Chromium keeps Ctrl+Shift+N).
        const before = await sidebar().getByRole("button", {name: /Incognito/}).count();
        await page.keyboard.press("Alt+Shift+N");
        await expect.poll(() => sidebar().getByRole("button", {name: /Incognito/}).count()).toBe(before + 1);
        await notice().waitFor();

        // The core restarts (web mode stopped and started on the same database): the incognito ones are gone, the stored one is there.
        await app.web.stop();
        app.web = await startWebMode(["--model", modelPath!, "--db", app.database, "--threads", "1", "--context-size", "2048"], {CLEANROOM_HOME: home, CLEANROOM_MODEL: "", TMPDIR: home});
        await page.goto(app.web.url);
        await sidebar().getByRole("button", {name: /^Remember Stored5521Heron/}).waitFor();
        expect(await sidebar().getByRole("button", {name: /Incognito/}).count()).toBe(0);
        expect(await page.getByText(secret).count()).toBe(0);
        expect(inDatabaseFiles(app.database, secret)).toBe(false);
        expect(inDecryptedRows(app.database, secret)).toBe(false);
    }, 240_000);
});

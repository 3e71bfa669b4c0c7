import fs from "node:fs";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** The raw bytes of the database, its WAL and its shared-memory index, as they are on disk now. */
function databaseFiles(database: string): Buffer[] {
    return ["", "-wal", "-shm"].map((suffix) => database + suffix).filter((file) => fs.existsSync(file)).map((file) => fs.readFileSync(file));
}

/** Every row of every ordinary table that holds `secret`, read through the store's key (the files are encrypted, so raw bytes alone prove little). */
function rowsHolding(database: string, secret: string): string[] {
    const db = openDatabase(database, {readonly: true});
    try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'").all() as Array<{name: string}>;
        return tables.flatMap(({name}) => (db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>)
            .filter((row) => JSON.stringify(row).includes(secret)).map(() => name));
    } finally {
        db.close();
    }
}

/** Settings' "Delete everything", in the real UI on real SQLite files. */
describe.skipIf(!runnable)("privacy at rest in the real UI", () => {
    let app: E2eApp;
    let page: Page;
    let database: string;
    const sidebar = () => page.getByRole("navigation", {name: "Conversations"});

    beforeAll(async () => {
        const home = tempDir("e2e-privacy");
        app = await openE2eApp({label: "e2e-privacy", home, args: ["--model", modelPath!], env: {TMPDIR: home}});
        ({page, database} = app);
        await page.goto(app.web.url);
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("Delete everything empties the list, shows what it checked, and leaves the secret nowhere in the database files", async () => {
        const secret = "Quokka7781Zephyr";
        for (const text of [`Remember the word ${secret} please.`, "A second conversation."]) {
            await page.getByRole("button", {name: "New conversation", exact: true}).click();
            // Typed only once the new conversation is open: the previous one's composer is still there (and enabled) until
            // the switch, and what is typed into it stays with that conversation.
            await expect.poll(() => page.getByRole("heading", {level: 1}).textContent(), {timeout: 30_000}).toBe("New conversation");
            const composer = page.getByRole("textbox", {name: "Message"});
            await expect.poll(() => composer.isEnabled()).toBe(true);
            await composer.fill(text);
            await composer.press("Enter");
            await page.getByRole("article", {name: "Your message"}).filter({hasText: text}).waitFor({timeout: 30_000})
                .catch(async (error: unknown) => {
                    await page.screenshot({path: `/tmp/privacy-e2e-${text.length}.png`});
                    throw error;
                });
            await expect.poll(() => page.getByRole("article", {name: "Assistant message"}).last().getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        }
        await sidebar().getByRole("button", {name: /^Remember the word/}).waitFor();
        expect(rowsHolding(database, secret).length, "the turn was stored").toBeGreaterThan(0);

        await page.getByRole("button", {name: "Settings", exact: true}).click();
        const dialog = page.getByRole("dialog", {name: "Settings"});
        await dialog.getByRole("button", {name: "Delete everything…"}).click();
        const confirm = dialog.getByRole("button", {name: "Delete everything now"});
        expect(await confirm.isDisabled(), "nothing is deleted before the phrase is typed").toBe(true);
        await dialog.getByRole("textbox", {name: /Type .delete everything. to confirm/}).fill("delete everything");
        await confirm.click();

        const report = dialog.getByRole("status", {name: "Delete everything report"});
        await report.waitFor();
        expect(await report.textContent()).toMatch(/Everything was deleted: \d+ checks, each clean\./);
        expect(await report.getByText(/^Remains/).count()).toBe(0);
        expect(await report.textContent()).toContain("rows of messages");
        await dialog.getByRole("button", {name: "Close", exact: true}).click();

        await expect.poll(() => sidebar().getByRole("button", {name: /Local only$/}).count()).toBe(0);
        expect(rowsHolding(database, secret), "no row holds the secret").toEqual([]);
        for (const bytes of databaseFiles(database))
            expect(bytes.includes(secret), "the secret's bytes are in no database file").toBe(false);
        expect(fs.statSync(database + "-wal", {throwIfNoEntry: false})?.size ?? 0, "the WAL is empty").toBe(0);

        // After a reload the list came from the core, not from the page's state: the app opens, as on a first start, on one
        // new empty conversation (asserted once it is open, not raced against its creation), and nothing deleted is back.
        await page.reload();
        await page.getByRole("textbox", {name: "Message"}).waitFor();
        await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("New conversation");
        expect(await sidebar().getByRole("button", {name: /Local only$/}).allTextContents()).toEqual([expect.stringMatching(/^New conversation/)]);
        expect(await sidebar().getByRole("button", {name: /^Remember the word/}).count()).toBe(0);
        expect(rowsHolding(database, secret)).toEqual([]);
    }, 240_000);
});

import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** The app tells the user when a deletion's text is still on disk because another program reads the database, and when it is gone. */
describe.skipIf(!runnable)("deleting a conversation while another program reads the database, in the real UI", () => {
    let app: E2eApp;
    let page: Page;
    let database: string;

    beforeAll(async () => {
        const home = tempDir("e2e-deletion");
        app = await openE2eApp({label: "e2e-deletion", home, args: ["--model", modelPath!], contextSize: 512, env: {TMPDIR: home}});
        ({page, database} = app);
        page.on("dialog", (dialog) => void dialog.accept());
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("shows that the purge is pending, then that it finished once the reader is done", async () => {
        await page.goto(app.web.url);
        await page.getByRole("button", {name: "New conversation", exact: true}).click();
        await page.getByRole("button", {name: "Delete New conversation"}).waitFor();

        const reader = openDatabase(database, {readonly: true});
        reader.exec("BEGIN");
        reader.prepare("SELECT COUNT(*) FROM conversations").get();
        try {
            await page.getByRole("button", {name: "Delete New conversation"}).click();
            // Undo is offered for a few seconds; the deletion itself (and its purge) follows.
            await page.getByRole("status").filter({hasText: "Deleted “New conversation”"}).getByRole("button", {name: "Undo"}).waitFor();
            const pending = page.getByRole("status").filter({hasText: "Deleted, but its text is not yet purged from disk"});
            await pending.waitFor();
            expect(await pending.textContent()).toMatch(/Another program is reading the database/);
        } finally {
            reader.exec("COMMIT");
            reader.close();
        }
        await page.getByRole("status").filter({hasText: "Purge finished"}).waitFor({timeout: 30_000});
        expect(await page.getByRole("status").filter({hasText: "not yet purged"}).count()).toBe(0);
    }, 180_000);
});

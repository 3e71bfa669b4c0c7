import type {Page} from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {unlockBackoffFile} from "../../src/core/node/database/keys/UnlockBackoff.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {seriousAxeViolations} from "../helpers/uxChecks.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;
const passphrase = "the e2e lock passphrase";

/** With a passphrase, the app opens on the lock screen; the passphrase, and only it, opens the conversations. */
describe.skipIf(!runnable)("the app lock in the real UI (web mode, no passphrase given at start)", () => {
    let app: E2eApp;
    let page: Page;
    let database: string;

    beforeAll(async () => {
        const home = tempDir("e2e-lock");
        database = path.join(home, "e2e.db");
        const db = openDatabase(path.join(home, "e2e.db"), {key: {passphrase}});
        const store = new ConversationStore(db);
        store.create({id: "diary", title: "My locked diary"});
        store.appendMessage("diary", {role: "user", content: "Dear diary", status: "complete"});
        db.close();
        app = await openE2eApp({label: "e2e-lock", home, args: ["--model", modelPath!], contextSize: 512, env: {TMPDIR: home, CLEANROOM_PASSPHRASE: ""}});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("shows the lock screen and no conversation; a wrong passphrase is refused, the right one opens the app", async () => {
        await page.goto(app.web.url);
        const locked = page.getByRole("main", {name: "Locked"});
        await locked.getByRole("heading", {name: "Cleanroom is locked"}).waitFor();
        expect(await page.getByText("My locked diary").count()).toBe(0);

        await locked.getByLabel("Passphrase").fill("not the passphrase");
        await locked.getByRole("button", {name: "Unlock"}).click();
        await expect.poll(() => locked.getByRole("alert").textContent()).toContain("does not open");
        expect(await locked.getByRole("alert").textContent()).toContain("Try again in 1 s");
        await app.screenshot("lock-01-wrong-passphrase");

        // As if five wrong passphrases had been tried in a run of the core before this one (the count is kept beside the database): 16 s to
        // wait, shown on a fresh page before any try. The page's clock stands still at the moment the wait began (playwright's clock; the
        // page's timers still run), so the wait is read before it ticks however slow the reload, and moved on by the test, not waited out.
        const waitBegan = Date.now();
        fs.writeFileSync(unlockBackoffFile(database), JSON.stringify({failures: 5, retryAt: waitBegan + 16_000}), {mode: 0o600});
        await page.clock.setFixedTime(waitBegan);
        await page.reload();
        await locked.getByRole("heading", {name: "Cleanroom is locked"}).waitFor();
        await locked.getByLabel("Passphrase").fill(passphrase);
        const button = locked.getByRole("button", {name: /^Unlock/});
        await expect.poll(() => button.isDisabled(), {timeout: 10_000, interval: 100}).toBe(true);
        const first = await button.textContent();
        expect(first).toMatch(/^Unlock \(wait \d+ s\)$/);
        expect(await locked.getByRole("status").textContent()).toMatch(/next try waits: \d+ s/);
        await app.screenshot("lock-01b-backoff");
        await page.clock.setFixedTime(waitBegan + 1000);
        await expect.poll(() => button.textContent(), {interval: 100}).toBe(`Unlock (wait ${Number(/\d+/.exec(first!)![0]) - 1} s)`);
        expect(await button.isDisabled(), "one second on, still waiting").toBe(true);

        // The 16 s over, for the core (its record's time of the next try now past) and on the page's clock.
        fs.writeFileSync(unlockBackoffFile(database), JSON.stringify({failures: 5, retryAt: Date.now()}), {mode: 0o600});
        await page.clock.setFixedTime(waitBegan + 16_000);
        await expect.poll(() => button.isDisabled(), {interval: 100}).toBe(false);
        expect(await button.textContent(), "the wait over").toBe("Unlock");
        await button.click();
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^My locked diary/}).waitFor();
        await page.getByRole("textbox", {name: "Message"}).waitFor();
        expect(fs.existsSync(unlockBackoffFile(database)), "the right passphrase reset the back-off").toBe(false);
        await app.screenshot("lock-02-unlocked");
    });
});

/** Set in Settings: the running app becomes a locked one; Lock now shows the lock screen; the new passphrase, and only it, opens it again. */
describe.skipIf(!runnable)("a passphrase set in the real UI's Settings (web mode, no passphrase at start)", () => {
    let app: E2eApp;
    let page: Page;
    const chosen = "chosen in settings";

    beforeAll(async () => {
        const home = tempDir("e2e-lock-set");
        const db = openDatabase(path.join(home, "e2e.db"), {key: {}});
        new ConversationStore(db).create({id: "plans", title: "My open plans"});
        db.close();
        app = await openE2eApp({label: "e2e-lock-set", home, args: ["--model", modelPath!], contextSize: 512, env: {TMPDIR: home, CLEANROOM_PASSPHRASE: ""}});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("sets it (typed twice), Lock now shows the lock screen, a wrong one is refused with a clear message, the right one shows the conversation", async () => {
        await page.goto(app.web.url);
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^My open plans/}).waitFor();
        await page.keyboard.press("Control+,");
        const settings = page.getByRole("dialog", {name: "Settings"});
        const lock = settings.getByRole("group", {name: "Passphrase and app lock"});
        await lock.getByRole("button", {name: "Set a passphrase…"}).click();
        await lock.getByLabel("New passphrase", {exact: true}).fill(chosen);
        await lock.getByLabel("New passphrase again").fill("chosen in settingz");
        await expect.poll(() => lock.getByRole("status").first().textContent()).toContain("differ");
        expect(await lock.getByRole("button", {name: "Set passphrase"}).isDisabled()).toBe(true);
        expect(await seriousAxeViolations(page), "the passphrase section").toEqual([]);
        await lock.getByLabel("New passphrase again").fill(chosen);
        await lock.getByRole("button", {name: "Set passphrase"}).click();
        await expect.poll(() => lock.getByRole("status").last().textContent(), {timeout: 30_000}).toContain("The passphrase is set");
        expect(await lock.getByLabel("New passphrase", {exact: true}).count(), "the fields are gone, emptied").toBe(0);
        await app.screenshot("lock-03-passphrase-set");

        await lock.getByRole("button", {name: "Lock now"}).click();
        const locked = page.getByRole("main", {name: "Locked"});
        await locked.getByRole("heading", {name: "Cleanroom is locked"}).waitFor();
        expect(await page.getByText("My open plans").count()).toBe(0);
        await locked.getByLabel("Passphrase").fill("not the chosen one");
        await locked.getByRole("button", {name: "Unlock"}).click();
        await expect.poll(() => locked.getByRole("alert").textContent()).toContain("does not open");
        await locked.getByLabel("Passphrase").fill(chosen);
        await locked.getByRole("button", {name: "Unlock"}).click();
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^My open plans/}).waitFor();
        await app.screenshot("lock-04-unlocked-after-set");
    });

    it("locked from elsewhere (as the idle time does), the open page loses its core process, reconnects to the fresh one, shows the lock screen and unlocks", async () => {
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^My open plans/}).waitFor();
        expect(await askWebMode(app.web, (client) => client.call("app.lock", {}))).toEqual({locked: true});
        const locked = page.getByRole("main", {name: "Locked"});
        await locked.getByRole("heading", {name: "Cleanroom is locked"}).waitFor();
        expect(await page.getByText("My open plans").count()).toBe(0);
        await locked.getByLabel("Passphrase").fill(chosen);
        await locked.getByRole("button", {name: "Unlock"}).click();
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^My open plans/}).waitFor();
        expect(app.web.stderr()).not.toMatch(/ended unexpectedly/);
    });
});

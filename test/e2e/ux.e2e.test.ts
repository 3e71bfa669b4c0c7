import fs from "node:fs";
import path from "node:path";
import type {Download, Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {outsideViewport, overlapping, seriousAxeViolations, tabThrough, visibleBoxes} from "../helpers/uxChecks.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

let app: E2eApp;
let page: Page;
const screenshot = (name: string) => app.screenshot(name);
/** The message whose reply Escape stops: held mid-stream (`holdReply`) until then, however fast the machine. */
const stopPrompt = "Now tell me a much longer story about a lighthouse keeper.";
const composer = () => page.getByRole("textbox", {name: "Message"});
const sidebar = () => page.getByRole("navigation", {name: "Conversations"});
const assistantMessages = () => page.getByRole("article", {name: "Assistant message"});
const userMessages = () => page.getByRole("article", {name: "Your message"});
const focusedLabel = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName ?? null);
const expectNoSeriousAxeViolations = async (view: string) => {
    const violations = await seriousAxeViolations(page);
    expect(violations, `${view}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
};
/** Asks the core over a second connection, as another window would. */
const askCore = <T,>(ask: Parameters<typeof askWebMode<T>>[1]) => askWebMode(app.web, ask);
/** What the core keeps as the conversation's draft. */
const storedDraft = async (conversationId: string) => (await askCore((client) => client.call("conversations.get", {conversationId}))).draft;
/** The id of the conversation the page shows (by its title in the core's list). */
const openConversationId = async () => {
    const list = await askCore((client) => client.call("conversations.list", {}));
    const title = await page.getByRole("heading", {level: 1}).textContent();
    return list.find((conversation) => conversation.title === title)!.id;
};

/** #12, tried as a new user would: drafts, focus and keys, layout at every width, message actions, the list, progress, accessibility. */
describe.skipIf(!runnable)("the app as people expect it, in Chromium against web mode and the real model", () => {
    beforeAll(async () => {
        app = await openE2eApp({label: "e2e-ux", args: ["--model", modelPath!], holdReply: {prompt: stopPrompt, afterTokens: 8}, screenshotPrefix: "ux-"});
        page = app.page;
        // Every origin: a test restarts web mode, on another port.
        await app.browser.grantPermissions(["clipboard-read", "clipboard-write"]);
        await page.setViewportSize({width: 1280, height: 800});
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("opens on a ready new conversation, its composer focused; no axe violation of impact serious or critical", async () => {
        await page.goto(app.web.url);
        await composer().waitFor();
        await expect.poll(focusedLabel).toBe("Message");
        expect(await page.getByText("No conversation open").count()).toBe(0);
        // One conversation in the core (asked over a second connection), and it is the one the page shows and opened.
        const inCore = await askCore((client) => client.call("conversations.list", {}));
        expect(inCore.map((conversation) => conversation.title)).toEqual(["New conversation"]);
        expect(await openConversationId()).toBe(inCore[0]!.id);
        await expect.poll(() => sidebar().getByRole("button", {name: /^New conversation\s*Local only$/}).count()).toBe(1);
        await screenshot("01-opens-ready");
        await expectNoSeriousAxeViolations("chat, empty");
    });

    it("keeps the typed message through a refusal, a reload and a restart of the core, one draft per conversation", async () => {
        const first = await openConversationId();
        // Too large for the context: refused before anything is stored; the text stays in the composer and in the core.
        const tooLarge = "lighthouse ".repeat(1500).trim();
        await composer().fill(tooLarge);
        await composer().press("Enter");
        const banner = page.getByRole("alert").filter({hasText: "too large"});
        await banner.waitFor();
        expect(await composer().inputValue()).toBe(tooLarge);
        await expect.poll(() => storedDraft(first)).toBe(tooLarge);
        await screenshot("02-refused-draft-kept");
        await banner.getByRole("button", {name: /Dismiss/}).click();

        await composer().fill("A draft for the first conversation");
        await expect.poll(() => storedDraft(first)).toBe("A draft for the first conversation");
        await page.reload();
        await expect.poll(() => composer().inputValue()).toBe("A draft for the first conversation");

        // A second conversation has its own draft; switching back and forth shows each one's.
        await page.keyboard.press("Alt+N");
        await expect.poll(() => composer().inputValue()).toBe("");
        await expect.poll(focusedLabel).toBe("Message");
        await composer().fill("Second conversation's draft");
        const second = await openConversationId();
        await expect.poll(() => storedDraft(second)).toBe("Second conversation's draft");
        expect(second).not.toBe(first);

        // The core restarts (web mode stopped and started on the same database): both drafts are there.
        await app.restartWeb();
        await page.goto(app.web.url);
        await expect.poll(() => composer().inputValue()).toBe("Second conversation's draft");
        await sidebar().locator("button.conversation-open:not([aria-current])").filter({hasText: "New conversation"}).click();
        await expect.poll(() => composer().inputValue()).toBe("A draft for the first conversation");
        await screenshot("03-draft-after-restart");
    });

    it("sends with Enter keeping focus, shows tokens and speed under the reply, Escape stops a reply and keeps its text", async () => {
        await composer().fill("Tell me a story about a brave little dragon.");
        await composer().press("Enter");
        await expect.poll(() => composer().inputValue()).toBe("");
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await focusedLabel()).toBe("Message");
        expect(await reply.getByLabel("Reply statistics").textContent()).toMatch(/^\d[\d,]* tokens · [\d.]+ tokens\/s$/);
        // Sent, the draft is gone from the core too.
        expect(await storedDraft(await openConversationId())).toBe("");

        await composer().fill(stopPrompt);
        await composer().press("Enter");
        // Held after 8 tokens: the reply is certainly mid-stream when Escape is pressed.
        await app.replyHeld();
        const stopped = assistantMessages().last();
        await expect.poll(async () => (await stopped.locator(".markdown").innerText()).trim()).not.toBe("");
        await composer().press("Escape");
        // Let it go on once the core has answered the stop: had it stopped nothing, the reply would now run to its end.
        await app.releaseReplyOnceStopped();
        await expect.poll(() => stopped.getAttribute("data-status"), {timeout: 30_000}).toBe("interrupted");
        // Its text is kept: the 8 tokens of before the Escape, and not one more.
        expect(await stopped.getByLabel("Reply statistics").textContent()).toMatch(/^8 tokens/);
        expect((await stopped.locator(".markdown").innerText()).trim()).not.toBe("");
        expect(await focusedLabel()).toBe("Message");
        await screenshot("04-escape-stopped");
    });

    it("Up in the empty composer edits the last message; resent, it is a new version and the old one is kept", async () => {
        const before = await userMessages().count();
        await composer().focus();
        await page.keyboard.press("ArrowUp");
        await expect.poll(() => composer().inputValue()).toBe(stopPrompt);
        await page.getByText("Editing your message").waitFor();
        await composer().fill("Tell me a short story about a lighthouse.");
        await composer().press("Enter");
        const edited = userMessages().last();
        await expect.poll(() => edited.textContent()).toContain("Tell me a short story about a lighthouse.");
        await expect.poll(() => assistantMessages().last().getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await userMessages().count()).toBe(before);
        expect(await edited.getByRole("group", {name: "Versions"}).textContent()).toContain("2 / 2");
        await screenshot("05-edited-version-2");

        await edited.getByRole("button", {name: "Previous version"}).click();
        await expect.poll(() => userMessages().last().textContent()).toContain(stopPrompt);
        expect(await userMessages().last().getByRole("group", {name: "Versions"}).textContent()).toContain("1 / 2");
        expect(await assistantMessages().last().getAttribute("data-status")).toBe("interrupted");
        await userMessages().last().getByRole("button", {name: "Next version"}).click();
        await expect.poll(() => userMessages().last().textContent()).toContain("Tell me a short story about a lighthouse.");

        // Edit from the message's own button, then Escape cancels and leaves the composer as it was.
        await userMessages().last().getByRole("button", {name: "Edit message"}).click();
        await expect.poll(() => composer().inputValue()).toBe("Tell me a short story about a lighthouse.");
        await composer().press("Escape");
        await expect.poll(() => composer().inputValue()).toBe("");
        expect(await page.getByText("Editing your message").count()).toBe(0);
    });

    it("copies a message, and each code block; renders tables, lists and highlighted code", async () => {
        const reply = assistantMessages().first();
        await reply.getByRole("button", {name: "Copy message"}).click();
        await reply.getByRole("button", {name: "Message copied"}).waitFor();
        const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
        expect(oneLine(await page.evaluate(() => navigator.clipboard.readText()))).toBe(oneLine(await reply.locator(".markdown").innerText()));

        // A conversation with Markdown in it, brought in by importing a JSON export.
        const markdownReply = "Here is the plan:\n\n| step | what |\n|---|---|\n| 1 | knead |\n| 2 | bake |\n\n- flour\n- water\n\n1. mix\n2. wait\n\n```js\nconst loaf = bake(\"rye\");\n```\n";
        const file = path.join(tempDir("e2e-ux-import"), "bread.json");
        fs.writeFileSync(file, JSON.stringify({format: "cleanroom.conversations", version: 1, exportedAt: Date.now(), conversations: [{
            title: "Bread plan", policy: "local", createdAt: Date.now(),
            messages: [
                {role: "user", content: "How do I bake bread?", status: "complete", createdAt: Date.now()},
                {role: "assistant", content: markdownReply, status: "complete", tokens: 40, createdAt: Date.now()}
            ]
        }]}));
        await sidebar().getByLabel("Import conversations from a JSON export").setInputFiles(file);
        await page.getByRole("status").filter({hasText: "Imported 1 conversation"}).waitFor();
        await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("Bread plan");
        const rendered = assistantMessages().first();
        expect(await rendered.locator("table tr").count()).toBe(3);
        expect(await rendered.locator("ul li").count()).toBe(2);
        expect(await rendered.locator("ol li").count()).toBe(2);
        expect(await rendered.locator("pre code.hljs .hljs-keyword").first().textContent()).toBe("const");
        await rendered.getByRole("button", {name: "Copy code"}).click();
        await rendered.getByRole("button", {name: "Code copied"}).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("const loaf = bake(\"rye\");\n");
        await screenshot("06-markdown-copy-code");
        await expectNoSeriousAxeViolations("chat with markdown");
    });

    it("exports one conversation or all as Markdown and JSON; the JSON imports back", async () => {
        // Copied out of the browser (connected to, not launched here, it keeps its downloads to itself).
        const saved = async (download: Download) => {
            const file = path.join(tempDir("e2e-ux-export"), download.suggestedFilename());
            await download.saveAs(file);
            return file;
        };
        const header = page.getByRole("main", {name: "Chat"}).locator("header");
        await header.getByText("Export", {exact: true}).click();
        const [markdown] = await Promise.all([page.waitForEvent("download"), header.getByRole("button", {name: "Export as Markdown"}).click()]);
        expect(markdown.suggestedFilename()).toBe("bread-plan.md");
        const markdownText = fs.readFileSync(await saved(markdown), "utf8");
        expect(markdownText).toContain("# Bread plan");
        expect(markdownText).toContain("| 1 | knead |");

        await sidebar().getByText("Export all", {exact: true}).click();
        const [json] = await Promise.all([page.waitForEvent("download"), sidebar().getByRole("button", {name: "Export all as JSON"}).click()]);
        expect(json.suggestedFilename()).toBe("cleanroom-conversations.json");
        const jsonFile = await saved(json);
        const exported = JSON.parse(fs.readFileSync(jsonFile, "utf8")) as {conversations: Array<{title: string}>};
        const titles = exported.conversations.map((conversation) => conversation.title).sort();
        expect(titles).toContain("Bread plan");
        expect(titles).toContain("Tell me a story about a brave little dragon.");

        const before = await sidebar().getByRole("listitem").count();
        await sidebar().getByLabel("Import conversations from a JSON export").setInputFiles(jsonFile);
        await page.getByRole("status").filter({hasText: `Imported ${titles.length} conversations`}).waitFor();
        await expect.poll(() => sidebar().getByRole("listitem").count()).toBe(before + titles.length);
    });

    it("renames, pins, searches message text, groups by date, and deletes with an Undo that keeps the same conversation", async () => {
        await expect.poll(() => sidebar().getByRole("region", {name: "Today"}).isVisible()).toBe(true);
        const dragon = /^Tell me a story about a brave little dragon\./;
        // A conversation's tools show on hover and when it is focused or open.
        const bread = sidebar().getByRole("listitem").filter({has: page.getByRole("button", {name: /^Bread plan/})}).first();
        await bread.hover();
        await bread.getByRole("button", {name: "Pin Bread plan"}).click();
        await expect.poll(() => sidebar().getByRole("region", {name: "Pinned"}).getByRole("button", {name: /Bread plan/}).count()).toBeGreaterThan(0);

        // Search finds a conversation by a word only its messages have (the replies of the story).
        await page.keyboard.press("Control+K");
        await expect.poll(focusedLabel).toBe("Search conversations");
        await page.keyboard.type("knead");
        const results = sidebar().getByRole("region", {name: "Search results"});
        // The results of "knead" itself, not of a word typed on the way ("kne" finds the stories' "knew"): the list is busy until they come.
        await expect.poll(() => results.getAttribute("aria-busy")).toBe("false");
        await expect.poll(() => results.getByRole("button", {name: /Bread plan/}).count()).toBeGreaterThan(0);
        expect(await results.getByRole("button", {name: dragon}).count()).toBe(0);
        expect(await results.textContent()).toContain("knead");
        await screenshot("07-search-content");
        await page.keyboard.press("Escape");
        await expect.poll(() => results.count()).toBe(0);

        // Rename.
        const item = sidebar().getByRole("listitem").filter({has: page.getByRole("button", {name: dragon})}).first();
        await item.hover();
        await item.getByRole("button", {name: /^Rename /}).click();
        await sidebar().getByRole("textbox", {name: "Conversation title"}).fill("Dragon stories");
        await page.keyboard.press("Enter");
        const dragonItem = sidebar().getByRole("button", {name: /^Dragon stories/});
        await dragonItem.first().waitFor();
        await dragonItem.first().click();
        await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("Dragon stories");
        const id = await openConversationId();
        const messageCount = await page.getByRole("article").count();

        // Delete, then Undo: the same conversation (same id, same messages) comes back.
        await dragonItem.first().hover();
        await sidebar().getByRole("button", {name: "Delete Dragon stories"}).click();
        const toast = page.getByRole("status").filter({hasText: "Deleted “Dragon stories”"});
        await toast.waitFor();
        expect(await dragonItem.count()).toBe(0);
        await screenshot("08-deleted-undo-offered");
        await toast.getByRole("button", {name: "Undo"}).click();
        await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("Dragon stories");
        expect(await openConversationId()).toBe(id);
        await expect.poll(() => page.getByRole("article").count()).toBe(messageCount);

        // Delete without Undo: once the offer runs out it is gone for good.
        await dragonItem.first().hover();
        await sidebar().getByRole("button", {name: "Delete Dragon stories"}).click();
        await toast.waitFor();
        await toast.waitFor({state: "detached", timeout: 30_000});
        // Gone from the core (not only from search, which leaves out the trash at once): polled, as the deletion ends after the toast.
        expect(await askCore((client) => client.call("conversations.search", {text: "Dragon stories"}))).toEqual([]);
        await expect.poll(() => askCore((client) => client.call("conversations.get", {conversationId: id}).then(() => "still there", (error: {code?: string}) => error.code)))
            .toBe("CONVERSATION_NOT_FOUND");
    });

    it("lists the keyboard shortcuts in a help sheet; Ctrl+, opens Settings; a dark theme follows the system", async () => {
        await composer().focus();
        await page.keyboard.press("Control+/");
        const help = page.getByRole("dialog", {name: "Keyboard shortcuts"});
        await help.waitFor();
        const text = await help.textContent();
        for (const keys of ["Ctrl+N", "Ctrl+K", "Ctrl+,", "Esc", "Shift+Enter"])
            expect(text).toContain(keys);
        await screenshot("09-help-sheet");
        await expectNoSeriousAxeViolations("help sheet");
        await page.keyboard.press("Escape");
        await expect.poll(() => help.count()).toBe(0);

        await page.keyboard.press("Control+,");
        const settings = page.getByRole("dialog", {name: "Settings"});
        await settings.waitFor();
        await expectNoSeriousAxeViolations("settings");
        // The model loaded again from Settings: the composer behind the dialog becomes usable again, and leaves the focus alone.
        await settings.getByRole("textbox", {name: "Model file (GGUF)"}).fill(modelPath!);
        await page.evaluate(() => {
            const box = document.querySelector<HTMLTextAreaElement>("textarea[aria-label='Message']")!;
            const seen = window as unknown as {composerWasDisabled: boolean};
            seen.composerWasDisabled = false;
            new MutationObserver(() => seen.composerWasDisabled ||= box.disabled).observe(box, {attributes: true, attributeFilter: ["disabled"]});
        });
        await settings.getByRole("button", {name: "Load", exact: true}).click();
        await expect.poll(() => page.evaluate(() => (window as unknown as {composerWasDisabled: boolean}).composerWasDisabled)).toBe(true);
        await expect.poll(() => composer().isEnabled()).toBe(true);
        expect(await focusedLabel(), "the message box behind Settings took the focus").not.toBe("Message");
        await page.keyboard.press("Escape");
        await expect.poll(() => settings.count()).toBe(0);

        await page.emulateMedia({colorScheme: "dark"});
        expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(15, 17, 21)");
        await screenshot("10-dark");
        await expectNoSeriousAxeViolations("chat, dark");
        await page.emulateMedia({colorScheme: "light"});
        expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(246, 247, 249)");
    });

    it("reaches every control by keyboard with a visible focus ring", async () => {
        // A conversation with an exchange in it (the imported copy of the story), so that its message actions are there.
        await sidebar().getByRole("button", {name: /^Tell me a story about a brave little dragon\./}).first().click();
        await expect.poll(() => assistantMessages().count()).toBeGreaterThan(0);
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const reached = await tabThrough(page, 90);
        const withoutRing = reached.filter((entry) => !entry.ring).map((entry) => entry.name);
        expect(withoutRing).toEqual([]);
        const names = reached.map((entry) => entry.name).join("\n");
        for (const control of ["New conversation", "Search conversations", "Pin ", "Rename ", "Delete ", "Export all", "Import", "Settings", "Shortcuts",
            "Local only", "Export", "Copy message", "Edit message", "Regenerate", "Message"])
            expect(names, control).toContain(control);
    });

    for (const [width, height] of [[360, 740], [500, 800], [768, 1024], [1280, 800], [2560, 1440]] as const)
        it(`lays out at ${width} px without overlap or overflow (element boxes measured)`, async () => {
            await page.setViewportSize({width, height});
            await composer().waitFor();
            const narrow = width < 900;
            // Measured once the page has laid itself out for the new width: the narrow layout's drawers follow a media
            // query through a render, so right after the resize the wide layout can still be on screen (a 61 ms failure).
            await expect.poll(async () => (await visibleBoxes(page, "nav.sidebar")).length, {timeout: 10_000}).toBe(narrow ? 0 : 1);
            await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

            const chat = (await visibleBoxes(page, "main.chat"))[0]!;
            const textarea = (await visibleBoxes(page, "textarea[aria-label='Message']"))[0]!;
            expect(outsideViewport([chat, textarea], width, height)).toEqual([]);
            // The composer takes the chat's width (less its padding) on narrow windows, and is never a sliver.
            if (width < 600)
                expect(textarea.width).toBeGreaterThan(chat.width - 40);
            expect(textarea.width).toBeGreaterThan(Math.min(width, 1000) * 0.4);
            const header = await visibleBoxes(page, ".chat-header > *");
            const actions = await visibleBoxes(page, ".composer-actions > *, .composer textarea");
            expect(overlapping(header)).toEqual([]);
            expect(overlapping(actions)).toEqual([]);
            expect(outsideViewport([...header, ...actions], width, height)).toEqual([]);

            const sidebarBox = await visibleBoxes(page, "nav.sidebar");
            const panelBox = await visibleBoxes(page, "section.isolation");
            if (narrow) {
                expect(sidebarBox).toEqual([]);
                expect(panelBox).toEqual([]);
                expect(chat.width).toBeGreaterThanOrEqual(width - 1);
                await screenshot(`11-${width}-chat`);
                await expectNoSeriousAxeViolations(`chat at ${width}`);

                for (const [toggle, selector] of [["Conversations", "nav.sidebar"], ["Isolation", "section.isolation"]] as const) {
                    const button = page.getByRole("button", {name: toggle, exact: true});
                    await button.click();
                    expect(await button.getAttribute("aria-expanded")).toBe("true");
                    const drawer = (await visibleBoxes(page, selector))[0]!;
                    expect(outsideViewport([drawer], width, height)).toEqual([]);
                    await screenshot(`11-${width}-${toggle.toLowerCase()}-open`);
                    await expectNoSeriousAxeViolations(`${toggle} drawer at ${width}`);
                    await page.keyboard.press("Escape");
                    await expect.poll(async () => (await visibleBoxes(page, selector)).length).toBe(0);
                }
            } else {
                expect(sidebarBox).toHaveLength(1);
                expect(panelBox).toHaveLength(1);
                expect(overlapping([sidebarBox[0]!, chat, panelBox[0]!])).toEqual([]);
                expect(outsideViewport([sidebarBox[0]!, panelBox[0]!], width, height)).toEqual([]);
                expect(await page.getByRole("button", {name: "Isolation", exact: true}).count()).toBe(0);
                await screenshot(`11-${width}`);
            }
        });
});

describe.skipIf(!runnable)("progress while the user waits: the model load's steps by name, and the first token", () => {
    let progressApp: E2eApp;

    beforeAll(async () => {
        // No --threads: the first load measures the thread count, a step the user sees named.
        progressApp = await openE2eApp({label: "e2e-ux-load", args: ["--no-model"], threads: null, screenshotPrefix: "ux-load-"});
    }, 240_000);

    afterAll(async () => {
        await progressApp?.close();
    });

    it("names each step of the first model load, the thread measurement among them, then opens a ready conversation", async () => {
        const loadPage = progressApp.page;
        await loadPage.goto(progressApp.web.url);
        await loadPage.getByRole("heading", {name: "Choose a local model"}).waitFor();
        page = loadPage;
        await expectNoSeriousAxeViolations("first-run screen");
        // Every step the page has shown as the current one or as done (✓), recorded as it shows them. Two of the core's
        // step events can reach the page in one render (the query cache batches its notifications), so a short step may
        // never be the current one on screen; it is then shown done as soon as a later step is current.
        await loadPage.evaluate(() => {
            const seen: string[] = [];
            (window as unknown as {seenSteps: string[]}).seenSteps = seen;
            new MutationObserver(() => {
                const shown = [...document.querySelectorAll(".load-steps li.done, .load-steps [aria-current='step']")].map((step) => step.textContent ?? "");
                for (const step of shown) {
                    const label = step.replace(/^(✓|…) /, "");
                    if (!seen.includes(label))
                        seen.push(label);
                }
                if (document.querySelector(".typing[role='status']") != null && !seen.includes("first token"))
                    seen.push("first token");
            }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
        });
        await loadPage.getByRole("textbox", {name: "Model file path"}).fill(modelPath!);
        await loadPage.getByRole("button", {name: "Load model"}).click();
        await loadPage.getByRole("progressbar", {name: "Loading the model"}).waitFor();
        await progressApp.screenshot("01-loading-steps");
        await loadPage.getByRole("textbox", {name: "Message"}).waitFor({timeout: 120_000});
        await expect.poll(() => loadPage.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Message");
        const steps = await loadPage.evaluate(() => (window as unknown as {seenSteps: string[]}).seenSteps);
        expect(steps.some((step) => step.includes("Measuring the fastest thread count"))).toBe(true);
        expect(steps.some((step) => step.includes("Loading the model into memory"))).toBe(true);

        await loadPage.getByRole("textbox", {name: "Message"}).fill("Once upon a time");
        await loadPage.getByRole("textbox", {name: "Message"}).press("Enter");
        await expect.poll(() => loadPage.getByRole("article", {name: "Assistant message"}).last().getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await loadPage.evaluate(() => (window as unknown as {seenSteps: string[]}).seenSteps)).toContain("first token");
    });
});

import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {maxMessageTextLength} from "../../src/core/common/api/index.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

let app: E2eApp;
let page: Page;
const screenshot = (name: string) => app.screenshot(name);

/** The message whose reply the user stops: held mid-stream (`holdReply`) until Stop is clicked, however fast the machine. */
const stopPrompt = "Now tell me a much longer story about a lighthouse keeper.";
const assistantMessages = () => page.getByRole("article", {name: "Assistant message"});
const isolation = () => page.getByRole("region", {name: "Isolation"});

describe.skipIf(!runnable)("the real UI in Chromium against web mode and the real model", () => {
    beforeAll(async () => {
        // No model at start: the first-run screen comes first.
        app = await openE2eApp({label: "e2e-home", args: ["--no-model"], holdReply: {prompt: stopPrompt, afterTokens: 8}});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("shows the first-run screen without a model, a banner for a bad one, then the chat", async () => {
        await page.goto(app.web.url);
        await expect.poll(() => page.url()).not.toContain("token=");
        await page.getByRole("heading", {name: "Choose a local model"}).waitFor();
        await screenshot("01-first-run");

        await page.getByRole("textbox", {name: "Model file path"}).fill(path.join(tempDir("e2e-bad"), "missing.gguf"));
        await page.getByRole("button", {name: "Load model"}).click();
        await page.getByRole("alert").filter({hasText: "could not be loaded"}).first().waitFor();
        await screenshot("02-bad-model-banner");

        await page.getByRole("textbox", {name: "Model file path"}).fill(modelPath!);
        await page.getByRole("button", {name: "Load model"}).click();
        await page.getByRole("button", {name: "New conversation", exact: true}).waitFor();
    });

    it("runs React's production build, as users get it, though the tests' NODE_ENV (inherited by web mode) is \"test\"", async () => {
        const scriptUrl = await page.evaluate(() => document.querySelector<HTMLScriptElement>("script[type=module]")!.src);
        const script = await (await fetch(scriptUrl)).text();
        // Production React reports errors by code and link; its development build carries the warnings' text instead.
        expect(script.includes("react.dev/errors/"), `production React's error links in ${scriptUrl}`).toBe(true);
        expect(script.includes("Each child in a list should have a unique"), `development React's warnings in ${scriptUrl}`).toBe(false);
    });

    it("creates a conversation, streams a reply and renders it", async () => {
        await page.getByRole("button", {name: "New conversation", exact: true}).click();
        const composer = page.getByRole("textbox", {name: "Message"});
        await expect.poll(() => composer.isEnabled()).toBe(true);
        await composer.fill("Tell me a story about a brave little dragon.");
        await composer.press("Enter");

        const reply = assistantMessages().last();
        await expect.poll(async () => (await reply.textContent())?.length ?? 0, {timeout: 30_000}).toBeGreaterThan(60);
        const status = await reply.getAttribute("data-status");
        const partLength = (await reply.textContent())?.length ?? 0;
        if (status === "streaming")
            await screenshot("03-streaming");
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect((await reply.textContent())!.length).toBeGreaterThanOrEqual(partLength);
        await expect.poll(() => isolation().textContent()).toContain("Tokens used");
        await screenshot("04-reply-complete");
        expect(await page.getByRole("article", {name: "Your message"}).count()).toBe(1);
        // The first message names the conversation.
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^Tell me a story about a brave little dragon\.\s*Local only$/}).waitFor();
    });

    it("stops a reply mid-stream and keeps what was produced, marked stopped", async () => {
        const composer = page.getByRole("textbox", {name: "Message"});
        await composer.fill(stopPrompt);
        await page.getByRole("button", {name: "Send"}).click();

        // Held after 8 tokens: the reply is certainly mid-stream when Stop is clicked.
        await app.replyHeld();
        const stop = page.getByRole("button", {name: "Stop"});
        await stop.waitFor();
        const reply = assistantMessages().last();
        await expect.poll(async () => (await reply.locator(".markdown").innerText()).trim()).not.toBe("");
        await stop.click();
        // Let it go on once the core has answered the stop: had it stopped nothing, the reply would now run to its end.
        await app.releaseReplyOnceStopped();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 30_000}).toBe("interrupted");
        await expect.poll(() => reply.textContent()).toContain("Stopped");
        // What was produced is kept: the 8 tokens of before the Stop, and not one more.
        expect(await reply.getByLabel("Reply statistics").textContent()).toMatch(/^8 tokens/);
        expect((await reply.locator(".markdown").innerText()).trim()).not.toBe("");
        await expect.poll(() => stop.isVisible()).toBe(false);
        // The stopped turn's context is scrubbed at once, never reused: no live context, the scrub verified (abort).
        await expect.poll(() => isolation().textContent()).toContain("No live context");
        await expect.poll(() => isolation().textContent()).toMatch(/Scrub verified[\s\S]*abort/);
        await screenshot("05-stopped");
    });

    it("the sidebar search finds a word that is only in a message, not the title, and shows where", async () => {
        const sidebar = page.getByRole("navigation", {name: "Conversations"});
        const search = sidebar.getByRole("searchbox", {name: "Search conversations"});
        await search.fill("lighthouse keep");
        const found = sidebar.getByRole("button", {name: /^Tell me a story about a brave little dragon\./});
        await expect.poll(() => found.textContent(), {timeout: 10_000}).toContain("[lighthouse] [keeper]");
        await search.fill("zebra-that-nobody-wrote");
        await expect.poll(() => sidebar.textContent(), {timeout: 10_000}).toContain("No match.");
        await search.fill("");
        await found.waitFor();
        expect(await found.textContent()).not.toContain("[");
    });

    it("switching conversation ends the previous session, and the Isolation panel shows its scrub verified", async () => {
        await page.getByRole("button", {name: "New conversation", exact: true}).click();
        const previous = isolation().getByLabel("Previous session");
        await previous.waitFor();
        await expect.poll(() => previous.textContent()).toContain("Scrub verified");
        expect(await previous.textContent()).toMatch(/Bytes zeroed\s*[\d.]+ (KiB|MiB|B)/);
        await screenshot("06-switched-scrub-verified");

        // Back to the first conversation: its own last scrub is the verified one, and a fresh context is built on the next turn.
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /^Tell me a story about a brave little dragon\.\s*Local only$/}).click();
        await expect.poll(() => isolation().textContent()).toContain("✓ Scrub verified");
        await expect.poll(() => isolation().textContent()).toContain("Scrub verified");
        expect(await assistantMessages().count()).toBe(2);
        await screenshot("07-back-to-first");
    });

    it("regenerates the last reply", async () => {
        await page.getByRole("button", {name: "Regenerate"}).click();
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await assistantMessages().count()).toBe(2);
    });

    it("shows a clear banner when a turn is too large for the context, and stores nothing", async () => {
        const before = await page.getByRole("article").count();
        const composer = page.getByRole("textbox", {name: "Message"});
        await composer.fill("lighthouse ".repeat(1500));
        await composer.press("Enter");
        const banner = page.getByRole("alert").filter({hasText: "too large"});
        await banner.waitFor();
        expect(await banner.textContent()).toMatch(/over/);
        expect(await page.getByRole("article").count()).toBe(before);
        await screenshot("08-turn-too-large");
        await banner.getByRole("button", {name: /Dismiss/}).click();
        await composer.fill("");
    });

    it("refuses a 1,100,000-character paste sent with Enter before sending it: the limit shown, the draft kept, web mode alive", async () => {
        const composer = page.getByRole("textbox", {name: "Message"});
        const before = await page.getByRole("article").count();
        const paste = "All work and no play makes Jack a dull boy. ".repeat(25_000).slice(0, 1_100_000);
        await composer.fill(paste);
        await composer.press("Enter");

        const notice = page.getByRole("alert").filter({hasText: "at most"});
        await notice.waitFor();
        expect(await notice.textContent()).toContain(`1,100,000 characters; a message can be at most ${maxMessageTextLength.toLocaleString("en-US")}`);
        expect(await page.getByRole("button", {name: "Send", exact: true}).isDisabled()).toBe(true);
        expect((await composer.inputValue()).length).toBe(1_100_000);
        expect(await page.getByRole("article").count()).toBe(before);
        expect(app.web.process.exitCode, app.web.stderr()).toBeNull();
        await screenshot("08b-message-too-long");

        // Cut to the limit, the notice goes and Send is back.
        await composer.fill(paste.slice(0, maxMessageTextLength));
        expect(await notice.count()).toBe(0);
        expect(await page.getByRole("button", {name: "Send", exact: true}).isEnabled()).toBe(true);
        await composer.fill("");
    });

    it("carries a message exactly at the limit, of characters JSON escapes, to the core whole (refused there for the context, not cut)", async () => {
        const composer = page.getByRole("textbox", {name: "Message"});
        const before = await page.getByRole("article").count();
        // \u0001 is six bytes on the wire and " two: the frame is far larger than the text.
        const text = "\u0001\"".repeat(maxMessageTextLength / 2);
        await composer.fill(text);
        await composer.press("Enter");
        const banner = page.getByRole("alert").filter({hasText: "too large"});
        await banner.waitFor();
        expect(await banner.textContent()).toMatch(/\d+ over/);
        expect(await page.getByRole("alert").filter({hasText: "Not connected"}).count()).toBe(0);
        expect((await composer.inputValue()).length).toBe(maxMessageTextLength);
        expect(await page.getByRole("article").count()).toBe(before);
        expect(app.web.process.exitCode, app.web.stderr()).toBeNull();
        await banner.getByRole("button", {name: /Dismiss/}).click();
        await composer.fill("");
    });

    it("keeps settings, with the Cloud fallback switch, across reloads", async () => {
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
        const dialog = page.getByRole("dialog", {name: "Settings"});
        const fallback = dialog.getByRole("switch", {name: "Cloud fallback"});
        expect(await fallback.getAttribute("aria-checked")).toBe("false");
        await fallback.click();
        await expect.poll(() => fallback.getAttribute("aria-checked")).toBe("true");
        await screenshot("09-settings");

        await page.reload();
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
        await expect.poll(() => page.getByRole("switch", {name: "Cloud fallback"}).getAttribute("aria-checked")).toBe("true");
        await page.getByRole("button", {name: "Close settings"}).click();
    });
});

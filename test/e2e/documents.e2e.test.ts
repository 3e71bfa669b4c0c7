import {PDFDocument, StandardFonts} from "pdf-lib";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {formatBytes} from "../../src/core/common/formatBytes.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {docxFile, imageOnlyPdf, textPdf} from "../helpers/documentFixtures.js";
import {setCloudSimulatorInSettings} from "../helpers/cloudSettingsUi.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";
import {seriousAxeViolations} from "../helpers/uxChecks.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

const sentence = "The lighthouse keeper counts eleven blue boats.";
const docxSentence = "The DOCX says the harbour opens on Thursday.";
const tsSource = "export const harbourPort = 8080;\nexport function openHarbour(): number {\n    return harbourPort;\n}\n";

const keySentence = "The keeper hid the PELICANORCHID key under the third stair.";
const fillerLines = ["The tide tables for the harbour were checked twice.", "Boats leave at dawn and come back before the evening bell.",
    "Nets are mended on the quay when the weather is calm.", "The lamp room is painted white every spring."];

/** A long report: `pageCount` pages of a heading and filler lines, with `keySentence` as line 3 of page `sentencePage`. */
async function longReportPdf(pageCount: number, sentencePage: number): Promise<Buffer> {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (let page = 1; page <= pageCount; page++) {
        const lines = [`Harbour report, page ${page}.`, ...fillerLines];
        if (page === sentencePage)
            lines.splice(2, 0, keySentence);
        const drawn = pdf.addPage([595, 842]);
        lines.forEach((line, index) => drawn.drawText(line, {x: 50, y: 780 - index * 20, size: 12, font}));
    }
    return Buffer.from(await pdf.save());
}

type FilePayload = {name: string, mimeType: string, buffer: Buffer};
let reportPdf: FilePayload;
let minutesDocx: FilePayload;
let harbourTs: FilePayload;
let scannedPdf: FilePayload;
/** 60 pages, far larger than the context: retrieved by passages, `keySentence` on page 37. */
let longReport: FilePayload;
/** Larger than one upload chunk (72 KiB): the page sends it in several. */
let serverLog: FilePayload;

let app: E2eApp;
let page: Page;
let sim: SharedCloudSimulator;

const composer = () => page.getByRole("textbox", {name: "Message"});
const composerChips = () => page.getByRole("form", {name: "Composer"}).getByRole("list", {name: "Attachments"}).getByRole("listitem");
const chip = (name: string) => composerChips().filter({hasText: name});
const fileInput = () => page.getByLabel("Files to attach");
const cloudDialog = () => page.getByRole("dialog", {name: "Send documents to the cloud?"});
const lastPrompt = () => page.getByRole("article", {name: "Your message"}).last();
const lastReply = () => page.getByRole("article", {name: "Assistant message"}).last();
const sources = () => lastReply().getByRole("navigation", {name: "Sources"});
const passageDialog = () => page.getByRole("dialog", {name: "long-report.pdf, page 37"});
const isolation = () => page.getByRole("region", {name: "Isolation"});

/** How long the core may take to read a file: PDF and DOCX are read in a fresh process each (about a second, more on a loaded machine). */
const readingTimeoutMs = 60_000;

/** Chips that are still being uploaded and read say "reading…"; this waits until none does. */
async function waitUntilRead(count: number) {
    await expect.poll(() => composerChips().count(), {timeout: readingTimeoutMs}).toBe(count);
    await expect.poll(() => composerChips().evaluateAll((items) => items.filter((item) => item.getAttribute("aria-busy") === "true").length),
        {timeout: readingTimeoutMs}).toBe(0);
}

async function openConversationId() {
    const list = await askWebMode(app.web, (client) => client.call("conversations.list", {}));
    const title = await page.getByRole("heading", {level: 1}).textContent();
    return [...list].sort((a, b) => b.updatedAt - a.updatedAt).find((conversation) => conversation.title === title)!.id;
}

/**
 * Pastes `file` into the message box, as after copying it in a file manager: a paste event carrying
 * it, and `withText` as its plain-text flavour when given (as a mail client or editor adds).
 */
async function pasteIntoComposer(file: FilePayload, withText = "") {
    await composer().evaluate((box, {name, mimeType, text, plainText}) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], name, {type: mimeType}));
        if (plainText !== "")
            transfer.setData("text/plain", plainText);
        box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: transfer, bubbles: true, cancelable: true}));
    }, {name: file.name, mimeType: file.mimeType, text: file.buffer.toString("utf8"), plainText: withText});
}

/** Drops `file` on the chat as a file manager would: a drop event carrying it in its DataTransfer. */
async function dropOnChat(file: FilePayload) {
    await page.evaluate(({name, mimeType, bytes}) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], name, {type: mimeType}));
        const target = document.querySelector(".messages")!;
        target.dispatchEvent(new DragEvent("dragover", {dataTransfer: transfer, bubbles: true, cancelable: true}));
        target.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
    }, {name: file.name, mimeType: file.mimeType, bytes: [...file.buffer]});
}

/** A new conversation, open once its own empty composer and message list are on screen (the one before may be titled the same). */
async function newConversation() {
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("New conversation");
    await expect.poll(() => page.getByRole("article").count()).toBe(0);
    await expect.poll(() => composer().inputValue()).toBe("");
}

describe.skipIf(!runnable)("documents in the real UI (#23): attach by file picker and drop, chips, an unreadable file, the cloud's question, citations, the Isolation panel", () => {
    beforeAll(async () => {
        reportPdf = {name: "report.pdf", mimeType: "application/pdf", buffer: Buffer.from(await textPdf(3, {2: sentence}))};
        minutesDocx = {name: "minutes.docx", mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            buffer: Buffer.from(await docxFile(["Minutes of the harbour meeting.", docxSentence]))};
        harbourTs = {name: "harbour.ts", mimeType: "video/mp2t", buffer: Buffer.from(tsSource)};
        serverLog = {name: "server.log", mimeType: "text/plain",
            buffer: Buffer.from(Array.from({length: 4000}, (_, line) => `2026-12-05 04:00:${String(line % 60).padStart(2, "0")} request ${line} served in 12 ms`).join("\n"))};
        scannedPdf = {name: "scan.pdf", mimeType: "application/pdf", buffer: Buffer.from(await imageOnlyPdf())};
        longReport = {name: "long-report.pdf", mimeType: "application/pdf", buffer: await longReportPdf(60, 37)};
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
        app = await openE2eApp({label: "e2e-documents-home", args: ["--model", modelPath!], screenshotPrefix: "documents-"});
        page = app.page;
        await page.goto(app.web.url);
        await page.getByRole("button", {name: "New conversation", exact: true}).waitFor({timeout: 180_000});
    }, 240_000);

    afterAll(async () => {
        await app?.close();
        await sim?.close();
    });

    it("a PDF, a DOCX and a .ts file attached with the paperclip's picker become chips (name, pages, size) that can be removed", async () => {
        await newConversation();
        await composer().fill("What do these files say?");
        await fileInput().setInputFiles([reportPdf, minutesDocx, harbourTs]);
        await waitUntilRead(3);
        // Each chip: the name, what the core read (pages) and the size, then its remove button (×).
        expect(await chip("report.pdf").textContent()).toBe(`report.pdf3 pages · ${formatBytes(reportPdf.buffer.byteLength)}×`);
        expect(await chip("minutes.docx").textContent()).toBe(`minutes.docx1 page · ${formatBytes(minutesDocx.buffer.byteLength)}×`);
        expect(await chip("harbour.ts").textContent()).toBe(`harbour.ts1 page · ${formatBytes(harbourTs.buffer.byteLength)}×`);
        expect(await page.getByRole("button", {name: "Attach files"}).isEnabled()).toBe(true);
        expect(await seriousAxeViolations(page)).toEqual([]);
        await app.screenshot("01-chips");

        // Removed, then attached again: the chip goes, and comes back.
        await page.getByRole("button", {name: "Remove harbour.ts"}).click();
        await waitUntilRead(2);
        await fileInput().setInputFiles([harbourTs]);
        await waitUntilRead(3);
        expect(await composer().inputValue()).toBe("What do these files say?");
    });

    it("Send: the message keeps its chips (with tokens), the documents went into the prompt whole, and the PDF's page 2 sentence with them", async () => {
        await page.getByRole("button", {name: "Send", exact: true}).click();
        const sentChips = lastPrompt().getByRole("list", {name: "Attached documents"}).getByRole("listitem");
        await expect.poll(() => sentChips.count()).toBe(3);
        await expect.poll(() => composerChips().count()).toBe(0);
        await expect.poll(() => lastReply().getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
        expect(await sentChips.allTextContents()).toEqual([
            expect.stringMatching(/^report\.pdf3 pages · .* · [\d,]+ tokens$/),
            expect.stringMatching(/^minutes\.docx1 page · .* · [\d,]+ tokens$/),
            expect.stringMatching(/^harbour\.ts1 page · .* · [\d,]+ tokens$/)
        ]);

        const conversationId = await openConversationId();
        const stored = await askWebMode(app.web, (client) => client.call("conversations.get", {conversationId}));
        const prompt = stored.messages.find((message) => message.role === "user")!;
        expect(prompt.attachments!.map(({name, format, pages, mode}) => ({name, format, pages, mode}))).toEqual([
            {name: "report.pdf", format: "pdf", pages: 3, mode: "whole"},
            {name: "minutes.docx", format: "docx", pages: 1, mode: "whole"},
            {name: "harbour.ts", format: "code", pages: 1, mode: "whole"}
        ]);
        const exported = JSON.parse(await askWebMode(app.web, (client) => client.call("conversations.export", {conversationId, format: "json"})).then((result) => result.text)) as
            {conversations: Array<{messages: Array<{attachments?: Array<{name: string, pages: string[]}>}>}>};
        const pdfPages = exported.conversations[0]!.messages[0]!.attachments!.find((attachment) => attachment.name === "report.pdf")!.pages;
        expect(pdfPages[1]).toContain(sentence);
        expect(pdfPages[0]).not.toContain(sentence);
        await app.screenshot("02-sent");

        await page.reload();
        await expect.poll(() => sentChips.count(), {timeout: 60_000}).toBe(3);
        expect(await sentChips.first().textContent()).toContain("report.pdf");
    });

    it("a file dropped on the chat or pasted is attached (text pasted with it kept); an image-only PDF is refused by name and reason, and the draft and the other chip stay", async () => {
        await newConversation();
        await composer().fill("Keep this draft.");
        await dropOnChat(harbourTs);
        await waitUntilRead(1);
        await fileInput().setInputFiles([scannedPdf]);
        const problem = page.getByRole("form", {name: "Composer"}).getByRole("alert");
        await expect.poll(() => problem.textContent(), {timeout: readingTimeoutMs}).toBe(
            "Could not attach scan.pdf: has no text layer on any of its 2 pages: it looks scanned, and no OCR is done");
        await waitUntilRead(1);
        expect(await chip("harbour.ts").count()).toBe(1);
        expect(await composer().inputValue()).toBe("Keep this draft.");
        await app.screenshot("03-scanned-refused");

        await page.getByRole("button", {name: "Remove harbour.ts"}).click();
        await waitUntilRead(0);

        // A pasted file larger than one upload chunk arrives whole.
        expect(serverLog.buffer.byteLength).toBeGreaterThan(2 * 72 * 1024);
        await pasteIntoComposer(serverLog);
        await waitUntilRead(1);
        expect(await chip("server.log").textContent()).toBe(`server.log1 page · ${formatBytes(serverLog.buffer.byteLength)}×`);
        expect(await composer().inputValue()).toBe("Keep this draft.");
        await page.getByRole("button", {name: "Remove server.log"}).click();
        await waitUntilRead(0);

        // A paste carrying a file and text attaches the file and keeps the text, at the caret.
        await composer().evaluate((box: HTMLTextAreaElement) => box.setSelectionRange(box.value.length, box.value.length));
        await pasteIntoComposer(harbourTs, " See the attached file.");
        await waitUntilRead(1);
        expect(await chip("harbour.ts").count()).toBe(1);
        expect(await composer().inputValue()).toBe("Keep this draft. See the attached file.");
        await page.getByRole("button", {name: "Remove harbour.ts"}).click();
        await waitUntilRead(0);
    });

    it("in a cloud-allowed conversation, a cloud turn with a document first asks, naming it and its size: Cancel keeps everything, Send sends it", async () => {
        await setCloudSimulatorInSettings(page, sim, "tenant-documents");
        await newConversation();
        const policy = page.getByRole("radiogroup", {name: "Conversation policy"});
        await policy.getByRole("radio", {name: "Cloud allowed"}).click();
        await page.getByRole("button", {name: "Send to cloud"}).waitFor();

        const received = sim.received.length;
        await composer().fill("Summarise the report.");
        await fileInput().setInputFiles([reportPdf]);
        await waitUntilRead(1);
        await page.getByRole("button", {name: "Send to cloud"}).click();
        await cloudDialog().waitFor();
        expect(await cloudDialog().getByRole("list", {name: "Documents to send"}).getByRole("listitem").allTextContents())
            .toEqual([`report.pdf ${formatBytes(reportPdf.buffer.byteLength)}`]);
        await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
        expect(await seriousAxeViolations(page)).toEqual([]);
        await app.screenshot("04-cloud-question");
        expect(sim.received.slice(received)).toEqual([]);

        await cloudDialog().getByRole("button", {name: "Cancel"}).click();
        await cloudDialog().waitFor({state: "detached"});
        await expect.poll(() => composer().inputValue()).toBe("Summarise the report.");
        expect(await chip("report.pdf").count()).toBe(1);
        expect(await page.getByRole("article").count()).toBe(0);
        expect(sim.received.slice(received)).toEqual([]);

        await page.getByRole("button", {name: "Send to cloud"}).click();
        await cloudDialog().getByRole("button", {name: "Send to the cloud"}).click();
        await cloudDialog().waitFor({state: "detached"});
        await expect.poll(() => lastReply().getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await lastReply().getAttribute("data-route")).toBe("cloud");
        const chat = sim.received.slice(received).filter((request) => request.path === "/v1/chat/completions");
        expect(chat).toHaveLength(1);
        expect(chat[0]!.body).toContain(sentence);
        expect(await lastPrompt().getByRole("list", {name: "Attached documents"}).getByRole("listitem").count()).toBe(1);
        await expect.poll(() => composerChips().count()).toBe(0);

        // The Isolation panel says where the document went: whole, to the simulator's host, and not to the local model.
        const entry = isolation().getByLabel("Documents", {exact: true}).getByRole("listitem", {name: "report.pdf"});
        await expect.poll(() => entry.textContent(), {timeout: 10_000}).toContain(`Sent whole to the cloud: ${new URL(sim.url).host},`);
        expect(await entry.textContent()).toContain("Not sent to the local model yet");
        // The reply cites the document given whole; the citation opens it page by page, the sentence on its page 2.
        const wholeCitation = lastReply().getByRole("navigation", {name: "Sources"}).getByRole("button");
        expect(await wholeCitation.allTextContents()).toEqual(["report.pdf, whole (3 pages)"]);
        await wholeCitation.click();
        const wholeDialog = page.getByRole("dialog", {name: "report.pdf, whole (3 pages)"});
        await expect.poll(() => wholeDialog.getByRole("region", {name: "Page 2"}).textContent()).toContain(sentence);
        expect(await wholeDialog.getByRole("region", {name: "Page 1"}).textContent()).not.toContain(sentence);
        await page.keyboard.press("Escape");
        await wholeDialog.waitFor({state: "detached"});
    });

    it("a 60-page PDF is attached and asked about: the reply cites page 37, and the citation opens that passage's lines (keyboard, Escape closes)", async () => {
        await newConversation();
        await composer().fill("Where did the keeper hide the PELICANORCHID key?");
        await fileInput().setInputFiles([longReport]);
        await waitUntilRead(1);
        await page.getByRole("button", {name: "Send", exact: true}).click();
        await expect.poll(() => lastReply().getAttribute("data-status"), {timeout: 120_000}).toBe("complete");

        // The best passage is page 37's, cited first; every citation names the document and a page.
        await expect.poll(() => sources().getByRole("button").count()).toBeGreaterThan(0);
        const labels = await sources().getByRole("button").allTextContents();
        expect(labels[0]).toBe("long-report.pdf, page 37");
        expect(labels.every((label) => /^long-report\.pdf, page \d+$/.test(label))).toBe(true);

        // Reached with the keyboard: focused, then Enter opens the passage; focus starts on Close.
        await sources().getByRole("button", {name: "long-report.pdf, page 37", exact: true}).focus();
        await page.keyboard.press("Enter");
        await passageDialog().waitFor();
        await expect.poll(() => passageDialog().textContent()).toContain(keySentence);
        const lines = passageDialog().getByRole("listitem");
        const sentenceLine = lines.filter({hasText: keySentence});
        expect(await sentenceLine.getAttribute("value")).toBe("3");
        expect(await passageDialog().getByRole("region", {name: "Page 37"}).count()).toBe(1);
        expect(await passageDialog().textContent()).toMatch(/Page 37, lines \d+–\d+/);
        await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Close");
        expect(await seriousAxeViolations(page)).toEqual([]);
        await app.screenshot("05-cited-passage");

        await page.keyboard.press("Escape");
        await passageDialog().waitFor({state: "detached"});
        await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("long-report.pdf, page 37");
    });

    it("the Isolation panel lists the document (size, pages, retrieved) as sent to the local model, never to the cloud", async () => {
        const documents = isolation().getByLabel("Documents", {exact: true});
        const entry = documents.getByRole("listitem", {name: "long-report.pdf"});
        await expect.poll(() => entry.textContent(), {timeout: 10_000}).toMatch(/60 pages · retrieved by passages/);
        expect(await entry.textContent()).toMatch(/Sent to the local model: [1-6] passages? in 1 reply/);
        expect(await entry.textContent()).toContain("Never sent to the cloud");
        await app.screenshot("06-isolation-documents");
    });

    it("the sidebar search finds words of the key sentence inside the attached PDF", async () => {
        const sidebar = page.getByRole("navigation", {name: "Conversations"});
        await sidebar.getByRole("searchbox", {name: "Search conversations"}).fill("third stair");
        await expect.poll(() => sidebar.textContent(), {timeout: 10_000}).toContain("[third] [stair]");
    });
});

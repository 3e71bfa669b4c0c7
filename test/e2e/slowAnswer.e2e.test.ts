import path from "node:path";
import type {Page, WebSocketRoute} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** A birpc request or answer as the page's WebSocket carries it (JSON). */
type RpcMessage = {t?: string, i?: string, m?: string, a?: unknown[]};

/**
 * Between the page and the core, holds back the core's answer to `conversations.get` for one
 * conversation until `release` is called; everything else passes at once, in order.
 */
function holdConversationAnswer(page: Page, conversationId: string) {
    let heldRequestId: string | null = null;
    let heldAnswer: {route: WebSocketRoute, message: string | Buffer} | null = null;
    let answerHeld: () => void = () => undefined;
    const held = new Promise<void>((resolve) => answerHeld = resolve);
    const parse = (message: string | Buffer): RpcMessage | null => {
        try {
            return typeof message === "string" ? JSON.parse(message) as RpcMessage : null;
        } catch {
            return null;
        }
    };
    const routing = page.routeWebSocket(/\/rpc\?/, (route) => {
        const server = route.connectToServer();
        route.onMessage((message) => {
            const request = parse(message);
            const [method, input] = request?.a ?? [];
            if (heldRequestId == null && request?.m === "call" && method === "conversations.get" && (input as {conversationId?: string}).conversationId === conversationId)
                heldRequestId = request.i ?? null;
            server.send(message);
        });
        server.onMessage((message) => {
            if (heldRequestId != null && heldAnswer == null && parse(message)?.i === heldRequestId) {
                heldAnswer = {route, message};
                answerHeld();
                return;
            }
            route.send(message);
        });
    });
    return {
        routing,
        held,
        release: () => heldAnswer?.route.send(heldAnswer.message)
    };
}

/**
 * #26: the open conversation's copy came from whichever `conversations.get` answered last, so a slow
 * answer for a conversation the user had already left replaced the one shown. Each conversation's
 * answer now lands under its own key in the query cache.
 */
describe.skipIf(!runnable)("a slow answer for the conversation left never replaces the one shown, in the real UI", () => {
    let app: E2eApp;
    let page: Page;

    beforeAll(async () => {
        const home = tempDir("e2e-slow-answer");
        const db = openDatabase(path.join(home, "e2e.db"), {key: {}});
        const store = new ConversationStore(db);
        store.create({id: "alpha", title: "Alpha notes"});
        store.appendMessage("alpha", {role: "user", content: "The alpha text", status: "complete"});
        store.create({id: "beta", title: "Beta notes"});
        store.appendMessage("beta", {role: "user", content: "The beta text", status: "complete"});
        db.close();
        app = await openE2eApp({label: "e2e-slow-answer", home, args: ["--model", modelPath!], contextSize: 512, env: {TMPDIR: home}});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
    });

    it("Alpha's answer, held back until Beta is open again, does not show: Beta's title and messages stay", async () => {
        const hold = holdConversationAnswer(page, "alpha");
        await hold.routing;
        await page.goto(app.web.url);
        const sidebar = page.getByRole("navigation", {name: "Conversations"});
        const heading = page.getByRole("heading", {level: 1});
        await expect.poll(() => heading.textContent()).toBe("Beta notes");

        await sidebar.getByRole("button", {name: /^Alpha notes/}).click();
        await hold.held;
        await sidebar.getByRole("button", {name: /^Beta notes/}).click();
        await page.getByText("The beta text").waitFor();
        hold.release();

        // Anything the core answers after the held answer reached the page comes after it on the same socket: a search is such an answer.
        await page.getByRole("searchbox", {name: "Search conversations"}).fill("alpha");
        await sidebar.getByRole("heading", {name: "1 match"}).waitFor();
        expect(await heading.textContent()).toBe("Beta notes");
        const shown = await page.getByRole("article").allTextContents();
        expect(shown.some((text) => text.includes("The beta text")), "Beta's message is shown").toBe(true);
        expect(shown.some((text) => text.includes("The alpha text")), "Alpha's message is not").toBe(false);
    });
});

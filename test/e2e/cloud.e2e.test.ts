import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {isCleanroomError} from "../../src/core/common/errors.js";
import {plantCanaries} from "../../src/core/common/cloud/plantCanaries.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

/** Our tenant on the shared cloud (the API key typed in Settings), and the other tenant whose data leaks. */
const ourKey = "tenant-ours";
const otherKey = "tenant-other";
/** Words only the other tenant ever wrote: none may reach our page. */
const otherTenantWords = ["Okonkwo", "Zanzibar", "marmalade", "quartermaster", "Vexholm"];
const otherTenantText = (index: number) => Array.from({length: 3}, (_, line) =>
    `Quartermaster Okonkwo wired the Zanzibar marmalade deposit ${index}-${line} to the Vexholm trust.`).join(" ");
/** The incident's pool: the turn must not fit it, yet fit the (larger) context the server advertises. */
const incidentPoolTokens = 1024;
/** The conversation's default reply budget, sent with every turn from the UI. */
const replyBudget = 512;

let app: E2eApp;
let page: Page;
let sim: SharedCloudSimulator | null = null;
const screenshot = (name: string) => app.screenshot(name);

const assistantMessages = () => page.getByRole("article", {name: "Assistant message"});
const isolation = () => page.getByRole("region", {name: "Isolation"});
const canaryCard = () => isolation().getByLabel("Cloud canaries");
const composer = () => page.getByRole("textbox", {name: "Message"});

/** Asks the core over a second connection, as another window would. */
const askCore = <T,>(ask: Parameters<typeof askWebMode<T>>[1]) => askWebMode(app.web, ask);

/** Whether the core still holds the conversation, in the list or in the trash. */
async function coreHolds(conversationId: string) {
    return await askCore((client) => client.call("conversations.get", {conversationId})).then(() => true, (error: unknown) => {
        if (isCleanroomError(error, "CONVERSATION_NOT_FOUND"))
            return false;
        throw error;
    });
}

/**
 * Points the app at a simulator through the Settings dialog. A key stored for an earlier
 * endpoint is never sent to a new one: the dialog must say to enter it again, and the key is typed
 * once more (`apiKey`), as a user does.
 */
async function configureCloud(target: SharedCloudSimulator, {apiKey}: {apiKey: string}) {
    await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
    const dialog = page.getByRole("dialog", {name: "Settings"});
    const keyField = dialog.getByLabel("API key", {exact: true});
    const hadKey = (await keyField.getAttribute("placeholder"))?.includes("stored") === true;
    await dialog.getByRole("textbox", {name: "Cloud endpoint"}).fill(target.url);
    await dialog.getByRole("textbox", {name: "Cloud model"}).fill(target.modelName);
    if (hadKey) {
        await dialog.getByRole("button", {name: "Save"}).click();
        await expect.poll(() => keyField.getAttribute("placeholder")).toBe("enter the key again");
        const notice = dialog.getByRole("status").filter({hasText: "enter the key again"});
        expect(await notice.textContent()).toContain(new URL(target.url).origin);
        await screenshot("settings-key-again");
    }
    await keyField.fill(apiKey);
    await dialog.getByRole("button", {name: "Save"}).click();
    await expect.poll(() => keyField.getAttribute("placeholder")).toContain("stored");
    return dialog;
}

/** A new conversation, switched to "Cloud allowed" in the chat header. */
async function newCloudAllowedConversation() {
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    const policy = page.getByRole("radiogroup", {name: "Conversation policy"});
    await expect.poll(() => policy.getByRole("radio", {name: "Local only"}).getAttribute("aria-checked")).toBe("true");
    expect(await page.getByRole("button", {name: "Send to cloud"}).count()).toBe(0);
    await policy.getByRole("radio", {name: "Cloud allowed"}).click();
    await expect.poll(() => policy.getByRole("radio", {name: "Cloud allowed"}).getAttribute("aria-checked")).toBe("true");
    await page.getByRole("button", {name: "Send to cloud"}).waitFor();
}

/** Earlier requests of another tenant, each page of them carrying that tenant's canaries. */
async function seedOtherTenant(target: SharedCloudSimulator) {
    for (let index = 0; index < 3; index++) {
        const {messages} = plantCanaries([
            {role: "system", content: "You keep the ledgers of the Vexholm trust."},
            {role: "user", content: otherTenantText(index)}
        ], {charsPerCanary: 60});
        const response = await fetch(`${target.url}/chat/completions`, {
            method: "POST",
            headers: {"authorization": `Bearer ${otherKey}`, "content-type": "application/json"},
            body: JSON.stringify({model: target.modelName, messages, max_tokens: 8})
        });
        const body = await response.text();
        expect(response.status, body).toBe(200);
    }
    expect(target.requests.every((request) => !request.overflowed)).toBe(true);
}

/** A prompt whose request (system prompt, canaries, reply budget) needs more than the pool but less than the advertised context. */
function incidentSizedPrompt(target: SharedCloudSimulator) {
    const sentence = "The brave little lighthouse keeper counted every wave that rolled in from the grey sea. ";
    let text = "";
    while (target.countTokens(text) < 700)
        text += sentence;
    const needed = target.countTokens(text) + 120 + replyBudget;
    expect(needed).toBeGreaterThan(incidentPoolTokens);
    expect(needed).toBeLessThan(target.advertisedContext);
    return text.trim();
}

/** Everything the page holds as text, visible or not, with attributes that carry text. */
async function allPageText() {
    return await page.evaluate(() => {
        const attributes = [...document.querySelectorAll("*")]
            .flatMap((element) => ["title", "aria-label", "value", "placeholder"].map((name) => element.getAttribute(name) ?? ""));
        const fields = [...document.querySelectorAll("textarea, input")].map((field) => (field as HTMLInputElement).value);
        return [document.documentElement.textContent ?? "", ...attributes, ...fields].join("\n");
    });
}

/** From now on, keeps every piece of text the page shows, even for a moment (streamed text included). */
async function recordEveryText() {
    await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as {seenText: string[]}).seenText = seen;
        new MutationObserver((records) => {
            for (const record of records) {
                if (record.type === "characterData")
                    seen.push(record.target.textContent ?? "");
                for (const node of record.addedNodes)
                    seen.push(node.textContent ?? "");
            }
        }).observe(document.body, {subtree: true, childList: true, characterData: true});
    });
}

async function recordedText() {
    return await page.evaluate(() => (window as unknown as {seenText: string[]}).seenText.join("\n"));
}

describe.skipIf(!runnable)("the shared cloud in the real UI: a cloud turn, then an incident's leak blocked", () => {
    beforeAll(async () => {
        app = await openE2eApp({label: "e2e-cloud-home", args: ["--model", modelPath!], screenshotPrefix: "cloud-"});
        page = app.page;
        sim = await SharedCloudSimulator.start({mode: "honest", modelPath: modelPath!});
    }, 240_000);

    afterAll(async () => {
        await app?.close();
        await sim?.close();
    });

    it("sets the cloud endpoint, model and key in Settings and turns Cloud fallback on", async () => {
        await page.goto(app.web.url);
        await page.getByRole("button", {name: "New conversation", exact: true}).waitFor({timeout: 180_000});
        const dialog = await configureCloud(sim!, {apiKey: ourKey});
        const fallback = dialog.getByRole("switch", {name: "Cloud fallback"});
        expect(await fallback.getAttribute("aria-checked")).toBe("false");
        await fallback.click();
        await expect.poll(() => fallback.getAttribute("aria-checked")).toBe("true");
        await screenshot("01-settings");
        await page.getByRole("button", {name: "Close settings"}).click();
    });

    it("a cloud-allowed conversation sends a turn to the cloud: a reply with the cloud route and reason, canaries planted", async () => {
        await newCloudAllowedConversation();
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: /Cloud allowed$/}).waitFor();
        await screenshot("02-cloud-allowed");

        await composer().fill("Once upon a time, a little fox found a shiny red ball.");
        await page.getByRole("button", {name: "Send to cloud"}).click();
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
        expect(await reply.getAttribute("data-route")).toBe("cloud");
        expect(await reply.textContent()).toContain("Sent to the cloud: the user asked for the cloud");
        expect((await reply.textContent())!.length).toBeGreaterThan(60);

        expect(sim!.requests).toHaveLength(1);
        expect(sim!.requests[0]).toMatchObject({tenant: ourKey, status: 200, overflowed: false});
        await expect.poll(() => canaryCard().textContent()).toMatch(/Checks passed\s*1/);
        const planted = Number(/Planted\s*(\d+)/.exec((await canaryCard().textContent())!)![1]);
        expect(planted).toBeGreaterThan(0);
        expect(await canaryCard().textContent()).toMatch(/Replies blocked\s*0/);
        expect(await allPageText()).not.toContain("CLRM-");
        await screenshot("03-cloud-turn");
    });

    it("incident mode: a reply carrying another tenant's pages is blocked, and nothing of it reaches the page", async () => {
        // The first conversation goes (scrubbed): its story, which the greedy test model tends to retell word for word,
        // would otherwise be caught first as a fingerprint, and this test is about the other tenant's canaries.
        const story = (await askCore((client) => client.call("conversations.list", {}))).filter((conversation) => conversation.title.startsWith("Once upon a time"));
        expect(story).toHaveLength(1);
        page.once("dialog", (dialog) => void dialog.accept());
        await page.getByRole("button", {name: /^Delete Once upon a time/}).click();
        await expect.poll(() => page.getByRole("navigation", {name: "Conversations"}).getByRole("listitem").count()).toBe(1);
        // Deleted for good once its Undo runs out: until the core has deleted it (not when the toast goes), its text is still
        // fingerprinted, as any other conversation's.
        await page.getByRole("status").filter({hasText: "Deleted “"}).waitFor({state: "detached"});
        await expect.poll(() => coreHolds(story[0]!.id), {timeout: 30_000}).toBe(false);
        await sim!.close();
        sim = await SharedCloudSimulator.start({mode: "incident", modelPath: modelPath!, poolTokens: incidentPoolTokens});
        await seedOtherTenant(sim);
        await configureCloud(sim, {apiKey: ourKey});
        await page.getByRole("button", {name: "Close settings"}).click();

        await newCloudAllowedConversation();
        await composer().fill(incidentSizedPrompt(sim));
        await recordEveryText();
        await page.getByRole("button", {name: "Send to cloud"}).click();
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 180_000}).toBe("blocked");

        // The server answered 200 with the other tenant's stale pages, which carried its words.
        const request = sim.requests.at(-1)!;
        expect(request).toMatchObject({tenant: ourKey, status: 200, overflowed: true});
        expect(request.leaks.length).toBeGreaterThan(0);
        expect(request.leaks.every((leak) => leak.tenant === otherKey)).toBe(true);
        const leaked = request.leaks.map((leak) => leak.sourceText).join(" ");
        expect(otherTenantWords.some((word) => leaked.includes(word))).toBe(true);

        const notice = (await reply.textContent())!;
        expect(notice).toMatch(/blocked/);
        expect(notice).toContain("another tenant's data");
        await page.getByRole("article", {name: "Assistant message"}).filter({hasText: "blocked"}).waitFor();
        await expect.poll(() => canaryCard().textContent()).toMatch(/Replies blocked\s*1/);
        expect(await canaryCard().textContent()).toMatch(/Checks passed\s*0/);

        const shown = await allPageText();
        expect(shown).not.toContain("CLRM-");
        for (const word of otherTenantWords)
            expect(shown.toLowerCase()).not.toContain(word.toLowerCase());
        // Not even for a moment while the reply streamed.
        const everShown = (await recordedText()).toLowerCase();
        expect(everShown).not.toContain("clrm-");
        for (const word of otherTenantWords)
            expect(everShown).not.toContain(word.toLowerCase());
        await screenshot("04-blocked");
    });

    it("Retry locally asks the local model the same prompt instead", async () => {
        const requestsBefore = sim!.requests.length;
        const prompt = await page.getByRole("article", {name: "Your message"}).last().textContent();
        await page.getByRole("button", {name: "Retry locally"}).click();
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-route"), {timeout: 60_000}).toBe("local");
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
        expect(await page.getByRole("article", {name: "Your message"}).last().textContent()).toBe(prompt);
        expect(sim!.requests).toHaveLength(requestsBefore);
        // The blocked reply stays counted: the audit trail keeps it.
        await expect.poll(() => isolation().getByLabel("Turn routes").textContent()).toMatch(/Turn 2\s*local/);
        expect(await canaryCard().textContent()).toMatch(/Replies blocked\s*1/);
        const shown = await allPageText();
        expect(shown).not.toContain("CLRM-");
        for (const word of otherTenantWords)
            expect(shown.toLowerCase()).not.toContain(word.toLowerCase());
        await screenshot("05-retried-locally");
    });

    it("a cloud reply for which the server counted far fewer prompt tokens than were sent is flagged", async () => {
        await sim!.close();
        sim = await SharedCloudSimulator.start({mode: "truncate", modelPath: modelPath!, truncateAboveTokens: 100});
        await configureCloud(sim, {apiKey: ourKey});
        await page.getByRole("button", {name: "Close settings"}).click();

        await composer().fill("Then the keeper's cat climbed the stairs to watch the light.");
        await page.getByRole("button", {name: "Send to cloud"}).click();
        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-route"), {timeout: 60_000}).toBe("cloud");
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
        expect(sim.requests.at(-1)).toMatchObject({tenant: ourKey, truncated: true});
        expect(await reply.textContent()).toContain("Flagged: truncation");
        expect(await reply.textContent()).toMatch(/The server counted \d+ prompt tokens; about \d+ were sent/);
        await expect.poll(() => canaryCard().textContent()).toMatch(/Replies flagged\s*1/);
        expect(await canaryCard().textContent()).toMatch(/Replies blocked\s*1/);
        expect(await allPageText()).not.toContain("CLRM-");
        await screenshot("06-flagged");
    });

    it("a turn too large for the cloud endpoint is refused there and the typed message comes back to the composer", async () => {
        await sim!.close();
        sim = await SharedCloudSimulator.start({mode: "honest", modelPath: modelPath!, poolTokens: 256});
        await configureCloud(sim, {apiKey: ourKey});
        await page.getByRole("button", {name: "Close settings"}).click();
        const before = await page.getByRole("article").count();
        const requestsBefore = sim.requests.length;

        const prompt = "The keeper wrote down every ship that passed the lighthouse that winter. ".repeat(12).trim();
        await composer().fill(prompt);
        await page.getByRole("button", {name: "Send to cloud"}).click();
        const banner = page.getByRole("alert").filter({hasText: "the cloud endpoint accepts"});
        await banner.waitFor({timeout: 60_000});
        await expect.poll(() => composer().inputValue()).toBe(prompt);
        await expect.poll(() => page.getByRole("article").count()).toBe(before);
        // Refused before it was sent: the endpoint saw no chat request.
        expect(sim.requests).toHaveLength(requestsBefore);
        await screenshot("07-over-cloud-limit-draft-kept");
        // Kept in the core too: a reload brings it back.
        await page.reload();
        await expect.poll(() => composer().inputValue()).toBe(prompt);
    });
});

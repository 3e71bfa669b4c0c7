import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {setCloudSimulatorInSettings} from "../helpers/cloudSettingsUi.js";
import {openE2eApp, type E2eApp} from "../helpers/e2eApp.js";
import {requireChromium} from "../helpers/launchChromium.js";
import {secretVectors} from "../helpers/secretCorpus.js";
import {askWebMode} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";
import {seriousAxeViolations} from "../helpers/uxChecks.js";

const modelPath = requireTestModel();
const runnable = requireChromium() && modelPath != null;

const awsKey = secretVectors(31).find((vector) => vector.kind === "aws-access-key" && vector.value.startsWith("AKIA"))!.value;
const maskedKey = `${awsKey.slice(0, 4)}…${awsKey.slice(-4)}`;
const prompt = `Why does the deploy fail?\naws configure set aws_access_key_id ${awsKey}`;

let app: E2eApp;
let page: Page;
let sim: SharedCloudSimulator;
const screenshot = (name: string) => app.screenshot(name);

const composer = () => page.getByRole("textbox", {name: "Message"});
const secretsDialog = () => page.getByRole("dialog", {name: "Not sent: secrets found"});
const assistantMessages = () => page.getByRole("article", {name: "Assistant message"});

/** Any 8 characters of the key in a row: what "no byte of it" is checked with. */
function containsPartOf(value: string, text: string) {
    for (let at = 0; at + 8 <= value.length; at++)
        if (text.includes(value.slice(at, at + 8)))
            return true;
    return false;
}

/** The bodies of every HTTP request the cloud simulator received after the first `from`. */
const receivedSince = (from: number) => sim.received.slice(from);

/** A new conversation, switched to "Cloud allowed" in the chat header. */
async function newCloudAllowedConversation() {
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    // The new conversation's own composer, not the previous one's still on screen.
    await expect.poll(() => page.getByRole("heading", {level: 1}).textContent()).toBe("New conversation");
    const policy = page.getByRole("radiogroup", {name: "Conversation policy"});
    await expect.poll(() => policy.getByRole("radio", {name: "Local only"}).getAttribute("aria-checked")).toBe("true");
    await policy.getByRole("radio", {name: "Cloud allowed"}).click();
    await page.getByRole("button", {name: "Send to cloud"}).waitFor();
}

/** Types `text` and sends it with Send to cloud; the Secrets found dialog must open. */
async function sendToCloudAndExpectDialog(text: string) {
    await composer().fill(text);
    await page.getByRole("button", {name: "Send to cloud"}).click();
    await secretsDialog().waitFor();
    return secretsDialog();
}

const focusedText = () => page.evaluate(() => document.activeElement?.textContent ?? null);
const focusInDialog = () => page.evaluate(() => document.querySelector("[role=dialog]")?.contains(document.activeElement) === true);

describe.skipIf(!runnable)("secrets in a cloud turn, in the real UI: the Secrets found dialog and the Never send list", () => {
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
        app = await openE2eApp({label: "e2e-secrets-home", args: ["--model", modelPath!], screenshotPrefix: "secrets-"});
        page = app.page;
    }, 240_000);

    afterAll(async () => {
        await app?.close();
        await sim?.close();
    });

    it("the cloud simulator is set as the endpoint in Settings, Cloud fallback on, and a conversation allows the cloud", async () => {
        await page.goto(app.web.url);
        await page.getByRole("button", {name: "New conversation", exact: true}).waitFor({timeout: 180_000});

        await setCloudSimulatorInSettings(page, sim, "tenant-secrets");
        await newCloudAllowedConversation();
    });

    it("a fake AWS key in a cloud turn opens the dialog: kind, place and masked preview, focus on Cancel; the server receives nothing", async () => {
        const received = sim.received.length;
        const articles = await page.getByRole("article").count();
        const dialog = await sendToCloudAndExpectDialog(prompt);

        const rows = dialog.getByRole("table", {name: "Secrets found"}).getByRole("row");
        expect(await rows.count()).toBe(2); // the header and one finding
        expect(await rows.nth(1).getByRole("cell").allTextContents()).toEqual(["AWS access key", "Your message, line 2", maskedKey]);
        expect(await dialog.textContent()).toContain("Nothing has left this machine");
        expect(containsPartOf(awsKey, (await dialog.textContent())!)).toBe(false);
        await expect.poll(focusedText).toBe("Cancel");
        expect(await dialog.getByRole("button", {name: "Answer locally instead"}).isEnabled()).toBe(true);
        expect(await seriousAxeViolations(page)).toEqual([]);
        await screenshot("01-dialog");

        // Keyboard: Tab goes round the three choices without leaving the dialog.
        for (let press = 0; press < 4; press++) {
            await page.keyboard.press("Tab");
            expect(await focusInDialog()).toBe(true);
        }
        expect(receivedSince(received)).toEqual([]);
        expect(await page.getByRole("article").count()).toBe(articles);
    });

    it("Cancel: nothing is sent or stored, the typed text is back in the message box; Escape does the same", async () => {
        const received = sim.received.length;
        const articles = await page.getByRole("article").count();
        await secretsDialog().getByRole("button", {name: "Cancel"}).click();
        await secretsDialog().waitFor({state: "detached"});
        await expect.poll(() => composer().inputValue()).toBe(prompt);

        await page.getByRole("button", {name: "Send to cloud"}).click();
        await secretsDialog().waitFor();
        // While it is open, the app's shortcuts do nothing: no Settings, no list of shortcuts, no new conversation on top of it.
        const heading = await page.getByRole("heading", {level: 1}).textContent();
        for (const shortcut of ["Control+,", "Control+/", "Control+n"])
            await page.keyboard.press(shortcut);
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        expect(await page.getByRole("dialog").count()).toBe(1);
        expect(await page.getByRole("heading", {level: 1}).textContent()).toBe(heading);
        await page.keyboard.press("Escape");
        await secretsDialog().waitFor({state: "detached"});
        await expect.poll(() => composer().inputValue()).toBe(prompt);
        expect(receivedSince(received)).toEqual([]);
        expect(await page.getByRole("article").count()).toBe(articles);
    });

    it("Send with these redacted: the server receives the placeholder and no byte of the key; the reply shown has the key back", async () => {
        const received = sim.received.length;
        await page.getByRole("button", {name: "Send to cloud"}).click();
        await secretsDialog().getByRole("button", {name: "Send with these redacted"}).click();
        await secretsDialog().waitFor({state: "detached"});

        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
        expect(await reply.getAttribute("data-route")).toBe("cloud");
        const bodies = receivedSince(received).map((request) => request.body);
        const chat = receivedSince(received).filter((request) => request.path === "/v1/chat/completions");
        expect(chat).toHaveLength(1);
        expect(chat[0]!.body).toContain("aws configure set aws_access_key_id [AWS access key 1]");
        expect(containsPartOf(awsKey, bodies.join("\n"))).toBe(false);
        // The simulator echoes what it received ("You said: …"); the placeholder was put back to the key on the way in.
        const shown = (await reply.textContent())!;
        expect(shown).toContain("You said:");
        expect(shown).toContain(`aws_access_key_id ${awsKey}`);
        expect(shown).not.toContain("[AWS access key 1]");
        expect(await page.getByRole("article", {name: "Your message"}).last().textContent()).toContain(awsKey);
        expect(await composer().inputValue()).toBe("");
        await screenshot("02-redacted");
    });

    it("Answer locally instead: the local model replies, and the server receives nothing", async () => {
        await newCloudAllowedConversation();
        const received = sim.received.length;
        const dialog = await sendToCloudAndExpectDialog(prompt);
        await dialog.getByRole("button", {name: "Answer locally instead"}).click();
        await secretsDialog().waitFor({state: "detached"});

        const reply = assistantMessages().last();
        await expect.poll(() => reply.getAttribute("data-route"), {timeout: 60_000}).toBe("local");
        await expect.poll(() => reply.getAttribute("data-status"), {timeout: 120_000}).toBe("complete");
        expect(await page.getByRole("article", {name: "Your message"}).last().textContent()).toContain(awsKey);
        expect(receivedSince(received)).toEqual([]);
        await screenshot("03-answered-locally");
    });

    it("a phrase added to Never send these in Settings (kept by the core) stops a cloud turn that contains it; the dialog names it, masked", async () => {
        await page.getByRole("navigation", {name: "Conversations"}).getByRole("button", {name: "Settings"}).click();
        const settings = page.getByRole("dialog", {name: "Settings"});
        const phraseField = settings.getByRole("textbox", {name: "Word or phrase never to send"});
        const list = settings.getByRole("list", {name: "Never send list"});
        for (const phrase of ["Project Falcon", "Bluebird"]) {
            await phraseField.fill(phrase);
            await phraseField.press("Enter");
            await list.getByRole("listitem").filter({hasText: phrase}).waitFor();
        }
        expect(await phraseField.inputValue()).toBe("");
        await phraseField.fill("project   FALCON");
        await settings.getByRole("button", {name: "Add", exact: true}).click();
        await settings.getByRole("alert").filter({hasText: "in the list already"}).waitFor();
        await settings.getByRole("button", {name: "Remove “Bluebird”"}).click();
        await expect.poll(() => list.getByRole("listitem").allTextContents()).toEqual(["Project FalconRemove"]);
        await screenshot("04-never-send-settings");
        const stored = await askWebMode(app.web, (client) => client.call("settings.get", {}));
        expect(stored.cloud.neverSend).toEqual(["Project Falcon"]);
        await page.getByRole("button", {name: "Close settings"}).click();

        await newCloudAllowedConversation();
        const received = sim.received.length;
        const text = "Draft the summary.\nWhat is the budget of project falcon this year?";
        const dialog = await sendToCloudAndExpectDialog(text);
        const rows = dialog.getByRole("table", {name: "Secrets found"}).getByRole("row");
        expect(await rows.nth(1).getByRole("cell").allTextContents()).toEqual(["Never-send phrase", "Your message, line 2", "••••••••"]);
        expect((await dialog.textContent())!.toLowerCase()).not.toContain("falcon");
        await screenshot("05-never-send-dialog");
        await dialog.getByRole("button", {name: "Cancel"}).click();
        await expect.poll(() => composer().inputValue()).toBe(text);
        expect(receivedSince(received)).toEqual([]);
    });
});

import type {Locator, Page} from "playwright-core";
import {expect} from "vitest";

/** In the app: a new conversation, `text` sent from its composer, and its reply once complete. */
export async function newConversationTurn(page: Page, text: string): Promise<Locator> {
    await page.getByRole("button", {name: "New conversation", exact: true}).click();
    const composer = page.getByRole("textbox", {name: "Message"});
    await expect.poll(() => composer.isEnabled()).toBe(true);
    await composer.fill(text);
    await composer.press("Enter");
    const reply = page.getByRole("article", {name: "Assistant message"}).last();
    await expect.poll(() => reply.getAttribute("data-status"), {timeout: 60_000}).toBe("complete");
    return reply;
}

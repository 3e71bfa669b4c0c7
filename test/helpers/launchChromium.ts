import fs from "node:fs";
import {chromium, type BrowserContext} from "playwright-core";
import {inject} from "vitest";

/**
 * Debian's chromium-headless-shell: the same Chromium build (Blink, V8) as its `chromium`, without the
 * desktop browser around it, as playwright itself runs headless. In the e2e runs it starts a third of
 * the renderer processes the full browser in headless mode does (no spare ones), and its browser
 * process spends a third of the CPU.
 */
export const chromiumPath = process.env.CLEANROOM_CHROMIUM ?? "/usr/lib/chromium/chromium-headless-shell";

declare module "vitest" {
    export interface ProvidedContext {
        /** The e2e projects' one Chromium (test/setup/chromiumServer.ts); absent when Chromium is. */
        chromiumEndpoint?: string
    }
}

/**
 * Whether the browser for end-to-end tests is present. Absent, the caller skips with a clear
 * message, except under CI=true, where that is a failure.
 */
export function requireChromium(): boolean {
    if (fs.existsSync(chromiumPath))
        return true;

    const message = `Chromium is missing at ${chromiumPath} (apt-get install -y chromium-headless-shell, or set CLEANROOM_CHROMIUM).`;
    if (process.env.CI === "true")
        throw new Error(`${message} Under CI it must be present.`);

    console.warn(`Skipping the browser end-to-end tests: ${message}`);
    return false;
}

/** Headless Chromium with no background traffic of its own, serving playwright's protocol (the e2e projects' globalSetup starts one per run). */
export async function launchChromiumServer() {
    return await chromium.launchServer({
        executablePath: chromiumPath,
        headless: true,
        args: [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"
        ]
    });
}

export type ChromiumContext = {
    context: BrowserContext,
    /** Closes the context and this file's connection; the browser goes on for the other files. */
    close(): Promise<void>
};

/**
 * A fresh context (its own storage, cookies and permissions, as a new profile has) in the run's one
 * Chromium: a file connects to it in a fraction of the time a browser of its own takes to start.
 */
export async function openChromiumContext(): Promise<ChromiumContext> {
    const endpoint = inject("chromiumEndpoint");
    if (endpoint == null)
        throw new Error("No Chromium to connect to: the e2e projects' globalSetup (test/setup/chromiumServer.ts) starts it, when Chromium is present.");

    const browser = await chromium.connect(endpoint);
    try {
        const context = await browser.newContext({viewport: {width: 1440, height: 900}, colorScheme: "light"});
        return {context, close: () => browser.close()};
    } catch (error) {
        await browser.close();
        throw error;
    }
}

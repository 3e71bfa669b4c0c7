import fs from "node:fs";
import {chromium, type BrowserContext} from "playwright-core";
import {tempDir} from "./tempCore.js";

export const chromiumPath = process.env.CLEANROOM_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Whether the browser for end-to-end tests is present. Absent, the caller skips with a clear
 * message, except under CI=true, where that is a failure.
 */
export function requireChromium(): boolean {
    if (fs.existsSync(chromiumPath))
        return true;

    const message = `Chromium is missing at ${chromiumPath} (apt-get install -y chromium, or set CLEANROOM_CHROMIUM).`;
    if (process.env.CI === "true")
        throw new Error(`${message} Under CI it must be present.`);

    console.warn(`Skipping the browser end-to-end tests: ${message}`);
    return false;
}

/** Headless Chromium on a fresh profile, with no background traffic of its own. */
export async function launchChromium(): Promise<BrowserContext> {
    return await chromium.launchPersistentContext(tempDir("chromium-profile"), {
        executablePath: chromiumPath,
        headless: true,
        args: [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"
        ],
        viewport: {width: 1440, height: 900},
        colorScheme: "light"
    });
}

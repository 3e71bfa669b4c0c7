import fs from "node:fs";
import path from "node:path";
import type {BrowserContext, Page} from "playwright-core";
import {launchChromium} from "./launchChromium.js";
import {startWebMode, type WebMode} from "./startWebMode.js";
import {tempDir} from "./tempCore.js";
import {repoRoot} from "./testModel.js";

const screenshotsDir = path.join(repoRoot, "test-results", "e2e");

export type E2eAppOptions = {
    /** Names the app's home folder. */
    label: string,
    /** The app's home folder, when the test fills it first. Defaults to a new temp folder. */
    home?: string,
    /** Web mode's options besides `--db`, `--threads 1` and `--context-size`, e.g. `--model <gguf>` or `--no-model`. */
    args: string[],
    /** Tokens per context. Defaults to `2048`. */
    contextSize?: number,
    /** `--threads`; null leaves the count to the core (measured at the first load). Defaults to `1`. */
    threads?: number | null,
    /** More environment for web mode (CLEANROOM_HOME is the app's home, CLEANROOM_MODEL is empty). */
    env?: NodeJS.ProcessEnv,
    /** Node's own options for web mode, after tsx: e.g. `--import` of a forced-fault preload. */
    nodeArgs?: string[],
    /** Screenshot file names start with this. Defaults to none. */
    screenshotPrefix?: string,
    /** Full-page screenshots. Defaults to `false`. */
    fullPage?: boolean
};

export type E2eApp = {
    /** Web mode (a test that restarts the core puts the new one here, and `close` stops that one). */
    web: WebMode,
    browser: BrowserContext,
    page: Page,
    /** The app's own folder: its database (`e2e.db`) and CLEANROOM_HOME. */
    home: string,
    database: string,
    screenshot(name: string): Promise<void>,
    close(): Promise<void>
};

/**
 * The app as the e2e tests drive it: web mode on its own home folder and database, one thread (far
 * faster on small machines), and a page in the real Chromium with a 60 s default timeout.
 */
export async function openE2eApp({label, home = tempDir(label), args, contextSize = 2048, threads = 1, env = {}, nodeArgs = [], screenshotPrefix = "", fullPage = false}: E2eAppOptions): Promise<E2eApp> {
    fs.mkdirSync(screenshotsDir, {recursive: true});
    const database = path.join(home, "e2e.db");
    const web = await startWebMode([...args, "--db", database, ...(threads != null ? ["--threads", String(threads)] : []), "--context-size", String(contextSize)],
        {CLEANROOM_HOME: home, CLEANROOM_MODEL: "", ...env}, undefined, undefined, nodeArgs);
    const browser = await launchChromium();
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    const app: E2eApp = {
        web, browser, page, home, database,
        screenshot: async (name) => void await page.screenshot({path: path.join(screenshotsDir, `${screenshotPrefix}${name}.png`), fullPage}),
        close: async () => {
            await browser.close();
            await app.web.stop();
        }
    };
    return app;
}

import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import type {BrowserContext, Page} from "playwright-core";
import {expect} from "vitest";
import {addFailureDiagnostics, lastLines} from "./failureDiagnostics.js";
import {openChromiumContext} from "./launchChromium.js";
import {startWebMode, type WebMode} from "./startWebMode.js";
import {tempDir} from "./tempCore.js";
import {repoRoot} from "./testModel.js";

const screenshotsDir = path.join(repoRoot, "test-results", "e2e");
/**
 * Nothing in a run reads the screenshots, and each costs the browser a frame and a PNG: they are
 * written only when asked for (`CLEANROOM_E2E_SCREENSHOTS=1`), to look at the steps of a run.
 */
const writeScreenshots = process.env.CLEANROOM_E2E_SCREENSHOTS === "1";
const holdGenerationPreload = path.join(path.dirname(fileURLToPath(import.meta.url)), "holdGeneration.preload.ts");

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
    /** Node's own options for web mode: e.g. `--import` of a forced-fault preload (compiled with web mode: startWebMode). */
    nodeArgs?: string[],
    /**
     * HELD REPLY: the first reply (in each web mode process) to a message containing `prompt` stops
     * after `afterTokens` tokens until `releaseReply()` (holdGeneration.preload.ts), so that a test acts
     * while it is certainly mid-stream. Defaults to none.
     */
    holdReply?: {prompt: string, afterTokens: number},
    /** Screenshot file names start with this. Defaults to none. */
    screenshotPrefix?: string,
    /** Full-page screenshots. Defaults to `false`. */
    fullPage?: boolean
};

export type E2eApp = {
    /** Web mode (a test that restarts the core puts the new one here, and `close` stops that one). */
    web: WebMode,
    /** The page's browser context: a fresh one, in the run's one Chromium. */
    browser: BrowserContext,
    page: Page,
    /** The app's own folder: its database (`e2e.db`) and CLEANROOM_HOME. */
    home: string,
    database: string,
    /** Saves the page as `test-results/e2e/<screenshotPrefix><name>.png`, when CLEANROOM_E2E_SCREENSHOTS=1. */
    screenshot(name: string): Promise<void>,
    /** Stops web mode and starts it again with the same options, on the same database (another port: `page.goto(app.web.url)`). */
    restartWeb(): Promise<void>,
    /** With `holdReply`: resolves once the reply is held (mid-stream). */
    replyHeld(): Promise<void>,
    /**
     * With `holdReply`: lets the held reply go on, once the core has answered the page's `chat.stop`
     * that stopped a turn (so that the stop is certainly in before the next token is).
     */
    releaseReplyOnceStopped(): Promise<void>,
    close(): Promise<void>
};

/**
 * The app as the e2e tests drive it: web mode on its own home folder and database, one thread (far
 * faster on small machines), and a page in the real Chromium with a 60 s default timeout.
 */
export async function openE2eApp({label, home = tempDir(label), args, contextSize = 2048, threads = 1, env = {}, nodeArgs = [], holdReply, screenshotPrefix = "",
    fullPage = false}: E2eAppOptions): Promise<E2eApp> {
    if (writeScreenshots)
        fs.mkdirSync(screenshotsDir, {recursive: true});
    const database = path.join(home, "e2e.db");
    const startWeb = () => startWebMode([...args, "--db", database, ...(threads != null ? ["--threads", String(threads)] : []), "--context-size", String(contextSize)],
        {
            CLEANROOM_HOME: home, CLEANROOM_MODEL: "", ...env,
            ...(holdReply != null ? {CLEANROOM_TEST_HOLD_PROMPT: holdReply.prompt, CLEANROOM_TEST_HOLD_AFTER_TOKENS: String(holdReply.afterTokens)} : {})
        },
        undefined, undefined, holdReply != null ? [...nodeArgs, "--import", holdGenerationPreload] : nodeArgs, holdReply != null ? "pipe" : "ignore");
    // The browser context opens while web mode starts.
    const [web, chromium] = await Promise.allSettled([startWeb(), openChromiumContext()]);
    if (web.status === "rejected" || chromium.status === "rejected") {
        if (web.status === "fulfilled")
            await web.value.stop();
        if (chromium.status === "fulfilled")
            await chromium.value.close();
        throw web.status === "rejected" ? web.reason : (chromium as PromiseRejectedResult).reason;
    }
    const browser = chromium.value.context;
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    // What the core sends the page (JSON text frames), for releaseReplyOnceStopped.
    const received: string[] = [];
    if (holdReply != null)
        page.on("websocket", (socket) => socket.on("framereceived", ({payload}) => void received.push(String(payload))));
    const removeDiagnostics = addFailureDiagnostics(() => `[${label}] web mode's stderr, last 60 lines:\n${lastLines(app.web.stderr(), 60)}`);
    const app: E2eApp = {
        web: web.value, browser, page, home, database,
        screenshot: async (name) => {
            if (writeScreenshots)
                await page.screenshot({path: path.join(screenshotsDir, `${screenshotPrefix}${name}.png`), fullPage});
        },
        restartWeb: async () => {
            await app.web.stop();
            app.web = await startWeb();
        },
        replyHeld: async () => {
            // The core process writes it on web mode's stderr, which it shares.
            await expect.poll(() => app.web.stderr(), {timeout: 60_000}).toMatch(/held after/);
        },
        releaseReplyOnceStopped: async () => {
            await expect.poll(() => received.some((frame) => frame.includes("\"stopped\":true")), {timeout: 30_000}).toBe(true);
            app.web.process.stdin!.write("\n");
        },
        close: async () => {
            removeDiagnostics();
            await chromium.value.close();
            await app.web.stop();
        }
    };
    return app;
}

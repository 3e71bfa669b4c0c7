import {spawn} from "node:child_process";
import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/** The Electron binary's path when it has been fetched, else null. */
export function findElectronBinary(): string | null {
    try {
        const binary = require("electron") as unknown;
        return typeof binary === "string" && fs.existsSync(binary) ? binary : null;
    } catch {
        return null;
    }
}

export type FetchElectronOptions = {
    /**
     * Leave the terminal to Electron's installer (its progress bar, and its stack trace on failure).
     * Defaults to `false`: output is captured and a failure is summed up in one line.
     */
    showProgress?: boolean,
    /** Gives up after this long. Defaults to 10 minutes. */
    timeoutMs?: number,
    env?: NodeJS.ProcessEnv
};

export type FetchElectronResult = {ok: true, binary: string} | {ok: false, reason: string};

const defaultFetchTimeoutMs = 10 * 60_000;

/**
 * Runs the Electron package's own installer (which `npm install` skips: `allowScripts` denies it,
 * so that installing never depends on Electron's download host). It downloads the binary for
 * this platform from Electron's release host or `ELECTRON_MIRROR`, checked against the package's
 * checksums.
 */
export async function fetchElectronBinary({showProgress = false, timeoutMs = defaultFetchTimeoutMs, env = process.env}: FetchElectronOptions = {}): Promise<FetchElectronResult> {
    let installer: string;
    try {
        installer = path.join(path.dirname(require.resolve("electron/package.json")), "install.js");
    } catch {
        return {ok: false, reason: "the electron package is not installed (run npm install)"};
    }
    const childEnv = {...env};
    delete childEnv.ELECTRON_SKIP_BINARY_DOWNLOAD;

    const output = await new Promise<{code: number | null, text: string}>((resolve) => {
        const child = spawn(process.execPath, [installer], {env: childEnv, stdio: showProgress ? "inherit" : ["ignore", "pipe", "pipe"]});
        let text = "";
        child.stdout?.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        child.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        const timer = setTimeout(() => {
            text += `\ntimed out after ${Math.round(timeoutMs / 1000)} s`;
            child.kill("SIGKILL");
        }, timeoutMs);
        child.on("error", (error) => {
            clearTimeout(timer);
            resolve({code: null, text: error.message});
        });
        child.on("close", (code) => {
            clearTimeout(timer);
            resolve({code, text});
        });
    });

    const binary = findElectronBinary();
    if (output.code === 0 && binary != null)
        return {ok: true, binary};

    return {ok: false, reason: firstErrorLine(output.text) ?? `the installer exited with code ${output.code}`};
}

/** The line of an installer's output that says what went wrong (not the stack trace below it). */
function firstErrorLine(text: string): string | null {
    const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("at "));
    const error = lines.find((line) => /error|timed out|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT/i.test(line));
    return error ?? lines.at(-1) ?? null;
}

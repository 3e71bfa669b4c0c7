import fs from "node:fs";
import path from "node:path";
import {writeFileDurably} from "../base/writeFileDurably.js";
import {appDataDir} from "../core/node/paths/appPaths.js";

/** After a failed automatic fetch of the Electron binary, `npm start` waits this long before trying again. */
export const retryFetchAfterMs = 24 * 60 * 60_000;

type FetchFailure = {failedAt: string, reason: string};

function recordPath() {
    return path.join(appDataDir(), "desktop-fetch-failed.json");
}

/** The last automatic fetch failure, when it is recent enough that `npm start` should not try again. */
export function recentFetchFailure(now = Date.now()): FetchFailure | null {
    try {
        const record = JSON.parse(fs.readFileSync(recordPath(), "utf8")) as FetchFailure;
        return now - Date.parse(record.failedAt) < retryFetchAfterMs ? record : null;
    } catch {
        return null;
    }
}

export function recordFetchFailure(reason: string) {
    try {
        fs.mkdirSync(appDataDir(), {recursive: true, mode: 0o700});
        // 0600, through an exclusive random temporary file (the reason may name local paths).
        writeFileDurably(recordPath(), JSON.stringify({failedAt: new Date().toISOString(), reason} satisfies FetchFailure));
    } catch {
        // Not being able to remember the failure only means trying again next time.
    }
}

export function clearFetchFailure() {
    fs.rmSync(recordPath(), {force: true});
}

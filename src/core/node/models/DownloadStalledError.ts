import {ModelDownloadError} from "./ModelDownloadError.js";

/** What a stalled download had received, and how long it waited. */
export type DownloadStallFacts = {
    url: string,
    /** Bytes of the file on disk when the stall ended the transfer. */
    receivedBytes: number,
    /** The file's announced size, or null when the server did not say. */
    totalBytes: number | null,
    /** How long nothing arrived before the transfer was given up (`stallTimeoutMs`). */
    stallTimeoutMs: number,
    /** The bytes stay for a resume (the server accepts ranges and something arrived). */
    resumable: boolean
};

/**
 * A transfer that received nothing for the stall timeout: the connection was open, the server
 * just stopped sending. The disk is not the problem, so what arrived is kept and the same
 * download resumes from there when the server accepts ranges.
 */
export class DownloadStalledError extends ModelDownloadError {
    public override readonly code = "DOWNLOAD_STALLED";
    public readonly facts: DownloadStallFacts;

    public constructor(facts: DownloadStallFacts, cause?: unknown) {
        const seconds = facts.stallTimeoutMs >= 1000 ? `${Math.round(facts.stallTimeoutMs / 100) / 10} s` : `${facts.stallTimeoutMs} ms`;
        const of = facts.totalBytes != null ? ` of ${facts.totalBytes}` : "";
        super("DOWNLOAD_STALLED",
            `The download stalled: nothing arrived for ${seconds} after ${facts.receivedBytes}${of} bytes. ` +
            (facts.resumable
                ? `The ${facts.receivedBytes} bytes received are kept; run the same download again to resume from there.`
                : facts.receivedBytes > 0 ? "The server does not resume downloads: the next attempt starts over." : "Nothing was received."),
            {url: facts.url, receivedBytes: facts.receivedBytes, totalBytes: facts.totalBytes, stallTimeoutMs: facts.stallTimeoutMs,
                keptBytes: facts.resumable ? facts.receivedBytes : 0, resumable: facts.resumable},
            cause);
        this.name = "DownloadStalledError";
        this.facts = facts;
    }
}

import fs from "node:fs";
import {writeFileDurably} from "../database/keys/durableFiles.js";
import {DownloadStalledError} from "./DownloadStalledError.js";
import {ModelDownloadError} from "./ModelDownloadError.js";

export type TransferRequest = {
    url: string,
    /** Makes each HTTP request (redirects followed and checked by the download policy). */
    fetch: (url: string, init: {headers: Record<string, string>, signal: AbortSignal}) => Promise<Response>,
    headers: Record<string, string>,
    /** The file the bytes are written to. */
    partPath: string,
    /** The resume record beside it: the URL, size and validator the bytes in `partPath` belong to. */
    statePath: string,
    /** Bytes the server announced in its probe (or the catalog promised). Never more are written; null when unknown. */
    announcedBytes: number | null,
    /** The probe was answered with 206: a resume may ask for the rest with a Range request. */
    acceptsRanges: boolean,
    /** No byte for this long ends the transfer with `DownloadStalledError` (what arrived is kept). */
    stallTimeoutMs: number,
    /** Time allowed for each response's status and headers. */
    connectTimeoutMs: number,
    /** Attempts in a row that end without a new byte (dropped connection, early end, 5xx) before giving up. */
    maxAttempts: number,
    /** Asked after every `roomCheckBytes` written, with what is still to fetch: false stops the transfer as a full disk. */
    hasRoom?: (stillToFetchBytes: number | null) => Promise<boolean>,
    signal?: AbortSignal,
    onBytes?: (downloadedBytes: number, totalBytes: number | null) => void
};

export type TransferResult = {resumedFromBytes: number, transferredBytes: number, totalBytes: number, seconds: number};

/** The disk takes no more bytes: a write failed with ENOSPC, EDQUOT or EFBIG, or the room check said no. */
export class WriteSpaceExhausted extends Error {
    public readonly writtenBytes: number;
    public readonly totalBytes: number | null;
    public readonly errno: "ENOSPC" | "EDQUOT" | "EFBIG" | null;

    public constructor(writtenBytes: number, totalBytes: number | null, errno: "ENOSPC" | "EDQUOT" | "EFBIG" | null, cause?: unknown) {
        super(errno != null ? `the disk is full (${errno})` : "the free space fell under the reserve", {cause});
        this.name = "WriteSpaceExhausted";
        this.writtenBytes = writtenBytes;
        this.totalBytes = totalBytes;
        this.errno = errno;
    }
}

type ResumeState = {version: 1, url: string, totalBytes: number | null, etag: string | null, lastModified: string | null};

const roomCheckBytes = 1024 * 1024;
const diskFullErrnos: ReadonlySet<string> = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);
const maxBackoffMs = 5000;

/**
 * Streams `url` into `partPath` with plain HTTP, one request at a time, so that every failure is
 * caught here and none escapes as an unhandled rejection. Resumes what an earlier, interrupted
 * transfer of the same URL and size left (Range + If-Range), retries dropped connections from
 * where they stopped, and enforces the announced size: a server that sends more than it
 * announced is cut off (`DOWNLOAD_SIZE_MISMATCH`). A full disk is thrown as
 * `WriteSpaceExhausted`; the caller decides whether the partial file stays.
 */
export async function transferToFile(request: TransferRequest): Promise<TransferResult> {
    const {url, partPath, statePath, acceptsRanges, signal} = request;
    const started = performance.now();
    const previous = readState(statePath);
    const partBytes = fs.statSync(partPath, {throwIfNoEntry: false})?.size ?? null;
    const resumable = previous != null && previous.url === url && previous.totalBytes != null && previous.totalBytes === request.announcedBytes &&
        acceptsRanges && partBytes != null;
    const state: ResumeState = resumable ? previous : {version: 1, url, totalBytes: request.announcedBytes, etag: null, lastModified: null};
    let position = resumable ? Math.min(partBytes, previous.totalBytes!) : 0;
    const startBytes = position;
    let total = request.announcedBytes;

    const fd = await openPart(partPath, position, total);
    try {
        writeState(statePath, state, position, total);
        let failures = 0;
        let lastFailure = "";
        for (;;) {
            throwIfCancelled(signal, position);
            const before = position;
            const attempt = new Attempt(request);
            try {
                const response = await attempt.fetch(position > 0 && acceptsRanges ? position : null, state);
                const body = acceptResponse(response, position, total, url);
                if (body.restartAt0) {
                    position = 0;
                    await fd.truncate(0);
                }
                if (body.complete)
                    break;
                total ??= body.totalBytes;
                rememberValidators(statePath, state, response, position, total);
                const cursor = {position};
                try {
                    await attempt.stream(response, fd, cursor, total);
                } finally {
                    position = cursor.position;
                }
                if (total == null || position === total) {
                    total = position;
                    break;
                }
                lastFailure = `the connection ended after ${position} of ${total} bytes`;
            } catch (error) {
                lastFailure = attempt.classify(error, position, total, signal);
                if (error instanceof RetryableError && error.restart && position > 0) {
                    position = 0;
                    await fd.truncate(0);
                }
            } finally {
                attempt.dispose();
            }
            failures = position > before ? 1 : failures + 1;
            if (failures >= request.maxAttempts)
                throw new ModelDownloadError("DOWNLOAD_FAILED",
                    `The download of ${url} failed ${failures} times in a row (${lastFailure}). ${keptText(position)}`, {url, keptBytes: position, reason: lastFailure});
            if (!acceptsRanges && position > 0) {
                position = 0; // without ranges, a retry starts over
                await fd.truncate(0);
            }
            await sleep(Math.min(maxBackoffMs, 250 * 2 ** (failures - 1)), signal);
        }
        await fd.datasync();
    } finally {
        await fd.close();
    }
    fs.rmSync(statePath, {force: true});
    return {resumedFromBytes: startBytes, transferredBytes: position - startBytes, totalBytes: position, seconds: (performance.now() - started) / 1000};
}

/** One HTTP request and its body, with its own connect and stall timers. */
class Attempt {
    private readonly _request: TransferRequest;
    private readonly _controller = new AbortController();
    private readonly _onAbort: () => void;
    private _stalled = false;
    private _connectTimedOut = false;
    private _lastActivity = performance.now();
    private readonly _watchdog: NodeJS.Timeout;
    private _connectTimer: NodeJS.Timeout | null = null;

    public constructor(request: TransferRequest) {
        this._request = request;
        this._onAbort = () => this._controller.abort(request.signal?.reason);
        request.signal?.addEventListener("abort", this._onAbort, {once: true});
        this._watchdog = setInterval(() => {
            if (performance.now() - this._lastActivity > request.stallTimeoutMs) {
                this._stalled = true;
                this._controller.abort(new Error("stalled"));
            }
        }, Math.max(50, Math.min(1000, request.stallTimeoutMs / 4)));
    }

    public async fetch(rangeStart: number | null, state: ResumeState): Promise<Response> {
        const {url, headers, acceptsRanges, connectTimeoutMs} = this._request;
        const validator = state.etag != null && !state.etag.startsWith("W/") ? state.etag : state.lastModified;
        this._connectTimer = setTimeout(() => {
            this._connectTimedOut = true;
            this._controller.abort(new Error("no answer"));
        }, connectTimeoutMs);
        try {
            return await this._request.fetch(url, {
                headers: {
                    ...headers, "accept-encoding": "identity",
                    ...(acceptsRanges ? {range: `bytes=${rangeStart ?? 0}-`} : {}),
                    ...(rangeStart != null && validator != null ? {"if-range": validator} : {})
                },
                signal: this._controller.signal
            });
        } finally {
            clearTimeout(this._connectTimer);
            this._lastActivity = performance.now();
        }
    }

    /** Writes the body at `cursor.position`, never past `total`; the cursor follows every byte written, also when this throws. */
    public async stream(response: Response, fd: fs.promises.FileHandle, cursor: {position: number}, total: number | null): Promise<void> {
        const reader = response.body!.getReader();
        let sinceRoomCheck = 0;
        try {
            for (;;) {
                const {done, value} = await reader.read();
                if (done)
                    return;
                this._lastActivity = performance.now();
                const position = cursor.position;
                if (total != null && position + value.length > total)
                    throw new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
                        `The server announced ${total} bytes but sent more: the transfer was cut off at ${total} bytes and the file deleted. ` +
                        "It is not the file that was announced.", {url: this._request.url, announcedBytes: total, receivedAtLeastBytes: position + value.length});
                cursor.position = await writeFully(fd, value, position, total, cursor);
                this._request.onBytes?.(cursor.position, total);
                sinceRoomCheck += value.length;
                if (this._request.hasRoom != null && sinceRoomCheck >= roomCheckBytes) {
                    sinceRoomCheck = 0;
                    if (!await this._request.hasRoom(total == null ? null : total - cursor.position))
                        throw new WriteSpaceExhausted(cursor.position, total, null);
                }
            }
        } finally {
            await reader.cancel().catch(() => undefined);
        }
    }

    /** Rethrows what ends the transfer; returns the reason of a failure worth another attempt. */
    public classify(error: unknown, position: number, total: number | null, signal?: AbortSignal): string {
        if (error instanceof WriteSpaceExhausted || error instanceof ModelDownloadError)
            throw error;
        throwIfCancelled(signal, position);
        if (this._stalled)
            throw new DownloadStalledError({
                url: this._request.url, receivedBytes: position, totalBytes: total, stallTimeoutMs: this._request.stallTimeoutMs,
                resumable: this._request.acceptsRanges && position > 0
            }, error);
        if (this._connectTimedOut)
            return `no answer within ${this._request.connectTimeoutMs / 1000} s`;
        return describeNetworkError(error);
    }

    public dispose() {
        clearInterval(this._watchdog);
        if (this._connectTimer != null)
            clearTimeout(this._connectTimer);
        this._request.signal?.removeEventListener("abort", this._onAbort);
        this._controller.abort(new Error("attempt over"));
    }
}

/** What a response means for the transfer at `position`; throws for one that must end it. */
function acceptResponse(response: Response, position: number, total: number | null, url: string) {
    const fail = (status: number) => new ModelDownloadError("DOWNLOAD_FAILED",
        `The server answered HTTP ${status}${response.statusText !== "" ? ` ${response.statusText}` : ""} during the download of ${url}.`, {url, status});
    if (response.status === 416) {
        void response.body?.cancel().catch(() => undefined);
        if (total != null && position === total)
            return {complete: true, restartAt0: false, totalBytes: total};
        throw new RetryableError(`the server refused the range from byte ${position} (HTTP 416)`, true);
    }
    if (response.status >= 500 || response.status === 429) {
        void response.body?.cancel().catch(() => undefined);
        throw new RetryableError(`HTTP ${response.status}`, false);
    }
    if (response.status !== 200 && response.status !== 206) {
        void response.body?.cancel().catch(() => undefined);
        throw fail(response.status);
    }

    let totalBytes: number | null = null;
    let restartAt0 = false;
    if (response.status === 206) {
        const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get("content-range") ?? "");
        if (range == null || Number(range[1]) !== position)
            throw new RetryableError(`the server answered the range from byte ${position} with "${response.headers.get("content-range") ?? "no Content-Range"}"`, true);
        totalBytes = range[3] === "*" ? null : Number(range[3]);
    } else {
        restartAt0 = position > 0; // the file changed on the server (If-Range), or it ignores ranges
        const length = response.headers.get("content-length");
        totalBytes = length != null && /^\d+$/.test(length) ? Number(length) : null;
    }
    if (total != null && totalBytes != null && totalBytes !== total)
        throw new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
            `The server announced ${total} bytes, then sent a response for ${totalBytes} bytes (${totalBytes - total > 0 ? "+" : ""}${totalBytes - total}): ` +
            "not the file that was announced. Nothing of it was kept.", {url, announcedBytes: total, remoteBytes: totalBytes});
    return {complete: false, restartAt0, totalBytes};
}

/** A response that another attempt may fix; `restart`: begin again from byte 0. */
class RetryableError extends Error {
    public readonly restart: boolean;

    public constructor(message: string, restart: boolean) {
        super(message);
        this.name = "RetryableError";
        this.restart = restart;
    }
}

async function openPart(partPath: string, position: number, total: number | null): Promise<fs.promises.FileHandle> {
    try {
        const fd = await fs.promises.open(partPath, position > 0 ? "r+" : "w", 0o600);
        await fd.truncate(position);
        return fd;
    } catch (error) {
        throw asSpaceError(error, position, total);
    }
}

async function writeFully(fd: fs.promises.FileHandle, chunk: Uint8Array, position: number, total: number | null, cursor: {position: number}): Promise<number> {
    let offset = 0;
    while (offset < chunk.length) {
        let written: number;
        try {
            ({bytesWritten: written} = await fd.write(chunk, offset, chunk.length - offset, position + offset));
        } catch (error) {
            throw asSpaceError(error, position + offset, total);
        }
        if (written === 0)
            throw new WriteSpaceExhausted(position + offset, total, "ENOSPC");
        offset += written;
        cursor.position = position + offset;
    }
    return position + offset;
}

function asSpaceError(error: unknown, writtenBytes: number, total: number | null): unknown {
    const code = (error as NodeJS.ErrnoException)?.code;
    return code != null && diskFullErrnos.has(code) ? new WriteSpaceExhausted(writtenBytes, total, code as "ENOSPC" | "EDQUOT" | "EFBIG", error) : error;
}

function readState(statePath: string): ResumeState | null {
    try {
        const parsed = JSON.parse(fs.readFileSync(statePath, "utf8")) as Partial<ResumeState>;
        return parsed.version === 1 && typeof parsed.url === "string" ? {
            version: 1, url: parsed.url, totalBytes: typeof parsed.totalBytes === "number" ? parsed.totalBytes : null,
            etag: typeof parsed.etag === "string" ? parsed.etag : null, lastModified: typeof parsed.lastModified === "string" ? parsed.lastModified : null
        } : null;
    } catch {
        return null;
    }
}

function writeState(statePath: string, state: ResumeState, position: number, total: number | null) {
    try {
        writeFileDurably(statePath, JSON.stringify(state) + "\n");
    } catch (error) {
        throw asSpaceError(error, position, total);
    }
}

function rememberValidators(statePath: string, state: ResumeState, response: Response, position: number, total: number | null) {
    const etag = response.headers.get("etag");
    const lastModified = response.headers.get("last-modified");
    if (etag === state.etag && lastModified === state.lastModified && total === state.totalBytes)
        return;
    state.etag = etag;
    state.lastModified = lastModified;
    state.totalBytes = total;
    writeState(statePath, state, position, total);
}

function throwIfCancelled(signal: AbortSignal | undefined, position: number) {
    if (signal?.aborted)
        throw new ModelDownloadError("DOWNLOAD_CANCELLED", `The download was cancelled. ${keptText(position)}`, {keptBytes: position});
}

function keptText(position: number) {
    return position > 0 ? `${position} bytes are kept; run the same download again to resume from there.` : "Nothing was kept.";
}

function sleep(ms: number, signal?: AbortSignal) {
    return new Promise<void>((resolve) => {
        const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, {once: true});
    });
}

export function describeNetworkError(error: unknown): string {
    const cause = (error as {cause?: {code?: string, message?: string}})?.cause;
    if (cause?.code != null)
        return `${cause.code}${cause.message != null && cause.message !== "" ? ` (${cause.message})` : ""}`;
    if (cause?.message != null && cause.message !== "")
        return cause.message;
    return error instanceof Error ? error.message : String(error);
}

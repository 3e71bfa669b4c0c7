import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {CleanroomError, ModelLoadError} from "../../common/errors.js";
import type {DownloadProgress} from "../../common/models.js";
import {loadLlama} from "../engine/loadLlama.js";
import {validateModelFile} from "../engine/validateModelFile.js";
import {ensureDirectory} from "../paths/ensureDirectory.js";
import {DiskFullError} from "./DiskFullError.js";
import {DownloadFetcher, type DownloadFetcherOptions} from "./DownloadFetcher.js";
import {DownloadUrlRefusedError} from "./DownloadUrlRefusedError.js";
import {ModelDownloadError} from "./ModelDownloadError.js";
import {resolveDownloadUrl} from "./resolveDownloadUrl.js";
import {describeNetworkError, transferToFile, WriteSpaceExhausted} from "./transferToFile.js";

export type ModelDownloaderOptions = {
    /** Folder the verified file is saved in (created when missing). */
    dir: string,
    /** Free bytes on the disk that holds `dir`. Defaults to `fs.statfs` (`bavail * bsize`). */
    diskFreeBytes?: (dir: string) => Promise<number>,
    /** Space left free beyond the file itself, checked before the transfer and every 1 MiB during it. Defaults to `256 MiB`. */
    diskReserveBytes?: number,
    /**
     * What happens to the bytes received when the disk fills during a transfer: `"delete"` gives
     * the space back at once (a full disk is what the user has to fix first); `"keep"` leaves them
     * for the next download of the same file to resume from. Defaults to `"delete"`.
     */
    partialOnDiskFull?: "delete" | "keep",
    /**
     * Checks the complete file before it takes its final name; a throw deletes it. Defaults to
     * `validateModelFile` (GGUF structure, complete header and tensors, an architecture llama.cpp
     * runs) with the process's shared `Llama`, without the memory limit.
     */
    validate?: (filePath: string) => Promise<void>,
    /**
     * A transfer that receives nothing for this long, the connection still open, ends with
     * `DOWNLOAD_STALLED` (what it got is kept for a resume). Defaults to `60 s`.
     */
    stallTimeoutMs?: number,
    /** Time allowed for each response's status and headers. Defaults to `30 s`. */
    connectTimeoutMs?: number,
    /** Attempts in a row without a new byte (dropped connections) before the download fails. Defaults to `5`. */
    maxAttempts?: number,
    /** Shortest interval between two `onProgress` calls while downloading. Defaults to `200 ms`. */
    progressIntervalMs?: number,
    /**
     * The URL policy and how requests are made (loopback for tests, redirects, the resolver, the
     * Hugging Face token). Defaults to `DownloadFetcher`'s defaults: https to public addresses
     * only, at most 5 redirects, `HF_TOKEN` for huggingface.co.
     */
    fetcher?: DownloadFetcherOptions
};

export type ModelDownloadRequest = {
    /** `https://` or `http://` URL, or an `hf:<user>/<repo>/<file>.gguf[#branch]` URI. */
    url: string,
    /** Name of the file in `dir`. Defaults to the last segment of the URL's path. */
    fileName?: string,
    /** The file must have this SHA-256 (hex); otherwise it is deleted and refused. Defaults to none (size only). */
    sha256?: string | null,
    /** The file must have exactly this size; checked against the server before the transfer and on disk after it. */
    expectedBytes?: number | null,
    /** HTTP headers sent with every request (for example an `Authorization` token). */
    headers?: Record<string, string>,
    /** Stops the transfer; what was received is kept so that the next download of the same file resumes. */
    signal?: AbortSignal,
    onProgress?: (progress: DownloadProgress) => void
};

export type ModelDownloadResult = {
    path: string,
    fileBytes: number,
    sha256: string,
    /** The SHA-256 was compared with an expected value (false when none was given: only the size was checked). */
    sha256Checked: boolean,
    /** The verified file was already in place; nothing was transferred. */
    alreadyPresent: boolean,
    /** Bytes kept from an earlier, interrupted download when this one started. */
    resumedFromBytes: number,
    /** Bytes received by this call. */
    transferredBytes: number,
    transferSeconds: number,
    verifySeconds: number
};

export const defaultDiskReserveBytes = 256 * 1024 * 1024;
export const defaultStallTimeoutMs = 60_000;
export const defaultConnectTimeoutMs = 30_000;
export const defaultMaxAttempts = 5;
export const defaultProgressIntervalMs = 200;

/** Suffix of a download that has not been verified yet; its resume record adds `.json`. */
export const partialSuffix = ".part";
const stateSuffix = ".json";
/** Left by node-llama-cpp's downloader in earlier versions; it cannot be resumed and is removed. */
const legacyTransferSuffix = ".ipull";
const ggufMagic = Buffer.from("GGUF", "ascii");

/**
 * Downloads a GGUF model into `<name>.part`, checks its size, GGUF structure and SHA-256, and only
 * then renames it to `<name>`: a file that did not verify is deleted and never offered, so a retry
 * starts clean. Interrupted transfers (cancel, crash, dropped connection) resume from the bytes
 * kept. A download the disk cannot hold is refused before it starts, and one that fills the disk
 * stops with `DISK_FULL`; a server that sends more than it announced is cut off.
 */
export class ModelDownloader {
    public readonly dir: string;
    /** Checks every URL (and redirect) against the download policy and makes the requests. */
    public readonly fetcher: DownloadFetcher;
    private readonly _diskFreeBytes: (dir: string) => Promise<number>;
    private readonly _diskReserveBytes: number;
    private readonly _partialOnDiskFull: "delete" | "keep";
    private readonly _validate: (filePath: string) => Promise<void>;
    private readonly _stallTimeoutMs: number;
    private readonly _connectTimeoutMs: number;
    private readonly _maxAttempts: number;
    private readonly _progressIntervalMs: number;

    public constructor({
        dir, diskFreeBytes = statfsFreeBytes, diskReserveBytes = defaultDiskReserveBytes, partialOnDiskFull = "delete", validate = validateDownloadedModel,
        stallTimeoutMs = defaultStallTimeoutMs, connectTimeoutMs = defaultConnectTimeoutMs, maxAttempts = defaultMaxAttempts,
        progressIntervalMs = defaultProgressIntervalMs, fetcher
    }: ModelDownloaderOptions) {
        this.fetcher = new DownloadFetcher(fetcher);
        this.dir = path.resolve(dir);
        this._diskFreeBytes = diskFreeBytes;
        this._diskReserveBytes = diskReserveBytes;
        this._partialOnDiskFull = partialOnDiskFull;
        this._validate = validate;
        this._stallTimeoutMs = stallTimeoutMs;
        this._connectTimeoutMs = connectTimeoutMs;
        this._maxAttempts = maxAttempts;
        this._progressIntervalMs = progressIntervalMs;
    }

    /** Paths used for a file name: the final file, the unverified `.part`, and the `.part.json` resume record. */
    public pathsFor(fileName: string) {
        const finalPath = path.join(this.dir, fileName);
        const partPath = finalPath + partialSuffix;
        return {finalPath, partPath, statePath: partPath + stateSuffix};
    }

    public async download(request: ModelDownloadRequest): Promise<ModelDownloadResult> {
        const {headers = {}, signal, onProgress} = request;
        const expectedSha256 = request.sha256?.toLowerCase() ?? null;
        if (expectedSha256 != null && !/^[0-9a-f]{64}$/.test(expectedSha256))
            throw new ModelDownloadError("DOWNLOAD_FAILED", `The expected SHA-256 must be 64 hex digits, got "${request.sha256}".`);

        const {url, fileName: urlFileName} = resolveDownloadUrl(request.url);
        this.fetcher.checkUrl(url);
        const fileName = request.fileName ?? urlFileName;
        if (fileName === "" || fileName !== path.basename(fileName) || fileName.startsWith("."))
            throw new ModelDownloadError("DOWNLOAD_FAILED", `"${fileName}" is not usable as a file name.`, {url});

        throwIfAborted(signal);
        ensureDirectory(this.dir, {what: "downloaded models"});
        const {finalPath, partPath, statePath} = this.pathsFor(fileName);
        const existing = await this._checkExisting(finalPath, request.expectedBytes ?? null, expectedSha256, signal);
        if (existing != null)
            return existing;

        // Our own first request: a clear answer for 404/500, and the size the server announces.
        const remote = await this._probe(url, headers, signal);
        const expectedBytes = request.expectedBytes ?? null;
        if (expectedBytes != null && remote.totalBytes != null && remote.totalBytes !== expectedBytes)
            throw new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
                `The server offers ${remote.totalBytes} bytes but ${expectedBytes} were expected ` +
                `(${remote.totalBytes - expectedBytes > 0 ? "+" : ""}${remote.totalBytes - expectedBytes}): not the file that was asked for. Nothing was downloaded.`,
                {url, expectedBytes, remoteBytes: remote.totalBytes});

        fs.rmSync(partPath + legacyTransferSuffix, {force: true});
        const announcedBytes = expectedBytes ?? remote.totalBytes;
        await this._ensureRoom(announcedBytes ?? 0, partPath); // of unknown size: at least the reserve must be free

        const transfer = await this._transfer({url, headers, partPath, statePath, announcedBytes, acceptsRanges: remote.acceptsRanges, signal, onProgress});

        const verifyStarted = performance.now();
        const fileBytes = fs.statSync(partPath).size;
        const refuse = (error: CleanroomError): never => {
            removePartial(partPath, statePath);
            throw error;
        };
        if (announcedBytes != null && fileBytes !== announcedBytes)
            refuse(new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
                `The downloaded file has ${fileBytes} bytes, ${announcedBytes} were expected (${fileBytes - announcedBytes} off). It was deleted.`,
                {url, expectedBytes: announcedBytes, actualBytes: fileBytes}));
        if (!startsWithGgufMagic(partPath))
            refuse(new ModelLoadError("MODEL_NOT_GGUF", "The downloaded file is not a GGUF model (it does not start with \"GGUF\"). It was deleted.", {url}));
        const sha256 = await sha256File(partPath, {
            signal,
            onProgress: (hashedBytes) => onProgress?.({phase: "verifying", downloadedBytes: hashedBytes, totalBytes: fileBytes, bytesPerSecond: 0, etaSeconds: null})
        });
        if (expectedSha256 != null && sha256 !== expectedSha256)
            refuse(new ModelDownloadError("DOWNLOAD_CHECKSUM_MISMATCH",
                `The downloaded file's SHA-256 is ${sha256}, ${expectedSha256} was expected. The file was deleted and is not offered.`,
                {url, expectedSha256, actualSha256: sha256, bytes: fileBytes}));
        try {
            await this._validate(partPath);
        } catch (error) {
            const wire = error instanceof CleanroomError ? error : new ModelLoadError("MODEL_NOT_GGUF", String(error));
            refuse(new CleanroomError(wire.code, `The downloaded file is not a usable model: ${wire.message.replace(partPath, fileName)} ` +
                "It was deleted; nothing was kept in the models folder.", {...wire.details, path: finalPath, url}, {cause: error}));
        }
        fs.renameSync(partPath, finalPath);

        return {
            path: finalPath,
            fileBytes,
            sha256,
            sha256Checked: expectedSha256 != null,
            alreadyPresent: false,
            resumedFromBytes: transfer.resumedFromBytes,
            transferredBytes: transfer.transferredBytes,
            transferSeconds: transfer.seconds,
            verifySeconds: (performance.now() - verifyStarted) / 1000
        };
    }

    /** A verified file already in place is reused; a different file under the same name is never overwritten. */
    private async _checkExisting(finalPath: string, expectedBytes: number | null, expectedSha256: string | null, signal?: AbortSignal) {
        if (!fs.existsSync(finalPath))
            return null;

        const started = performance.now();
        const fileBytes = fs.statSync(finalPath).size;
        const sha256 = expectedBytes == null || fileBytes === expectedBytes ? await sha256File(finalPath, {signal}) : null;
        if (sha256 == null || (expectedSha256 != null && sha256 !== expectedSha256) || (expectedSha256 == null && expectedBytes == null))
            throw new ModelDownloadError("DOWNLOAD_FAILED",
                `${finalPath} already exists and is not known to be this model` +
                (sha256 == null ? ` (${fileBytes} bytes, ${expectedBytes} expected)` : expectedSha256 != null ? ` (SHA-256 ${sha256})` : " (no size or checksum to compare)") +
                ". Move it away or download into another folder.", {path: finalPath});

        return {
            path: finalPath, fileBytes, sha256, sha256Checked: expectedSha256 != null, alreadyPresent: true,
            resumedFromBytes: 0, transferredBytes: 0, transferSeconds: 0, verifySeconds: (performance.now() - started) / 1000
        } satisfies ModelDownloadResult;
    }

    private async _probe(url: string, headers: Record<string, string>, signal?: AbortSignal) {
        const timeout = AbortSignal.timeout(this._connectTimeoutMs);
        let response: Response;
        try {
            response = await this.fetcher.fetch(url, {
                headers: {...headers, "accept-encoding": "identity", range: "bytes=0-0"},
                signal: signal != null ? AbortSignal.any([signal, timeout]) : timeout
            });
        } catch (error) {
            if (error instanceof DownloadUrlRefusedError)
                throw error;
            throwIfAborted(signal);
            const reason = timeout.aborted ? `no answer within ${this._connectTimeoutMs / 1000} s` : describeNetworkError(error);
            throw new ModelDownloadError("DOWNLOAD_FAILED", `Could not reach ${hostOf(url)}: ${reason}.`, {url, reason}, error);
        }
        await response.body?.cancel().catch(() => undefined);
        if (!response.ok)
            throw new ModelDownloadError("DOWNLOAD_FAILED",
                `The server answered HTTP ${response.status}${response.statusText !== "" ? ` ${response.statusText}` : ""} for ${url}` +
                (response.status === 404 ? ": no file there." : response.status >= 500 ? ": a server-side failure; try again later." : "."),
                {url, status: response.status});

        const contentRange = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
        const contentLength = Number(response.headers.get("content-length"));
        const totalBytes = response.status === 206 && contentRange != null
            ? Number(contentRange[1])
            : response.status === 200 && Number.isFinite(contentLength) && contentLength > 0 ? contentLength : null;
        return {totalBytes, acceptsRanges: response.status === 206};
    }

    /** Refuses, before any transfer, a download that would leave less than the reserve free. */
    private async _ensureRoom(totalBytes: number, partPath: string) {
        const stat = fs.statSync(partPath, {throwIfNoEntry: false});
        const alreadyAllocated = stat == null ? 0 : Math.min(stat.blocks * 512, totalBytes);
        const stillToFetchBytes = totalBytes - alreadyAllocated;
        const freeBytes = await this._diskFreeBytes(this.dir);
        if (freeBytes < stillToFetchBytes + this._diskReserveBytes)
            throw new DiskFullError({
                dir: this.dir, phase: "before", trigger: "reserve", freeBytes, stillToFetchBytes, reserveBytes: this._diskReserveBytes, writtenBytes: 0, partial: "none"
            });
    }

    private async _transfer({onProgress, ...request}: Omit<Parameters<typeof transferToFile>[0],
        "fetch" | "stallTimeoutMs" | "connectTimeoutMs" | "maxAttempts" | "hasRoom" | "onBytes"> & {
        onProgress?: (progress: DownloadProgress) => void
    }) {
        const reportProgress = progressReporter(this._progressIntervalMs, onProgress);
        try {
            const result = await transferToFile({
                ...request,
                fetch: (url, init) => this.fetcher.fetch(url, init),
                stallTimeoutMs: this._stallTimeoutMs,
                connectTimeoutMs: this._connectTimeoutMs,
                maxAttempts: this._maxAttempts,
                hasRoom: async (stillToFetchBytes) => await this._diskFreeBytes(this.dir) >= (stillToFetchBytes ?? 0) + this._diskReserveBytes,
                onBytes: reportProgress
            });
            // The last, throttled report: only for a transfer that went through. A failed one reports
            // nothing more as "downloading" (it is not running any more); its error says how far it got.
            reportProgress.flush();
            return result;
        } catch (error) {
            if (error instanceof ModelDownloadError && error.code === "DOWNLOAD_SIZE_MISMATCH")
                removePartial(request.partPath, request.statePath); // not the announced file: nothing of it is worth keeping
            if (error instanceof DownloadUrlRefusedError && (fs.statSync(request.partPath, {throwIfNoEntry: false})?.size ?? 0) === 0)
                removePartial(request.partPath, request.statePath); // refused before a byte came: leave nothing behind
            if (!(error instanceof WriteSpaceExhausted))
                throw error;

            const keep = this._partialOnDiskFull === "keep" && error.writtenBytes > 0 && request.announcedBytes != null && request.acceptsRanges;
            if (!keep)
                removePartial(request.partPath, request.statePath);
            const freeBytes = await this._diskFreeBytes(this.dir).catch(() => 0);
            throw new DiskFullError({
                dir: this.dir, phase: "during", trigger: error.errno ?? "reserve", freeBytes, reserveBytes: this._diskReserveBytes, writtenBytes: error.writtenBytes,
                stillToFetchBytes: error.totalBytes == null ? null : (keep ? error.totalBytes - error.writtenBytes : error.totalBytes),
                partial: keep ? "kept" : error.writtenBytes > 0 ? "deleted" : "none"
            }, error.cause ?? error);
        }
    }
}

/** Progress in bytes, throttled to one call per `intervalMs`, with the average speed and the time left. */
function progressReporter(intervalMs: number, onProgress?: (progress: DownloadProgress) => void) {
    const started = performance.now();
    let startBytes: number | null = null;
    let lastReportAt = 0;
    let latest: {downloadedBytes: number, totalBytes: number | null} | null = null;
    const emit = () => {
        if (latest == null || onProgress == null)
            return;
        const seconds = (performance.now() - started) / 1000;
        const total = latest.totalBytes ?? 0;
        const bytesPerSecond = seconds > 0 ? Math.max(0, latest.downloadedBytes - (startBytes ?? 0)) / seconds : 0;
        onProgress({
            phase: "downloading", downloadedBytes: latest.downloadedBytes, totalBytes: total, bytesPerSecond,
            etaSeconds: total > 0 && bytesPerSecond > 0 ? Math.max(0, total - latest.downloadedBytes) / bytesPerSecond : null
        });
    };
    const report = (downloadedBytes: number, totalBytes: number | null) => {
        startBytes ??= downloadedBytes;
        latest = {downloadedBytes, totalBytes};
        const now = performance.now();
        if (now - lastReportAt >= intervalMs || downloadedBytes === totalBytes) {
            lastReportAt = now;
            emit();
        }
    };
    return Object.assign(report, {flush: emit});
}

/** The default check of a downloaded file: its GGUF structure and tensors, whatever this machine's memory. */
async function validateDownloadedModel(filePath: string): Promise<void> {
    await validateModelFile(await loadLlama(), filePath, {totalMemoryBytes: Number.POSITIVE_INFINITY});
}

function removePartial(partPath: string, statePath: string) {
    fs.rmSync(partPath, {force: true});
    fs.rmSync(statePath, {force: true});
}

export type Sha256FileOptions = {
    signal?: AbortSignal,
    /** Called with the bytes hashed so far, at most every `1 MiB x 64`. */
    onProgress?: (hashedBytes: number) => void
};

export async function sha256File(filePath: string, {signal, onProgress}: Sha256FileOptions = {}): Promise<string> {
    const hash = crypto.createHash("sha256");
    let hashed = 0;
    let sinceReport = 0;
    for await (const chunk of fs.createReadStream(filePath, {highWaterMark: 1 << 20, signal}) as AsyncIterable<Buffer>) {
        hash.update(chunk);
        hashed += chunk.length;
        sinceReport += chunk.length;
        if (sinceReport >= 64 << 20) {
            sinceReport = 0;
            onProgress?.(hashed);
        }
    }
    onProgress?.(hashed);
    return hash.digest("hex");
}

export function startsWithGgufMagic(filePath: string): boolean {
    const head = Buffer.alloc(4);
    let fd: number | null = null;
    try {
        fd = fs.openSync(filePath, "r");
        return fs.readSync(fd, head, 0, 4, 0) === 4 && head.equals(ggufMagic);
    } catch {
        return false;
    } finally {
        if (fd != null)
            fs.closeSync(fd);
    }
}

async function statfsFreeBytes(dir: string): Promise<number> {
    const stats = await fs.promises.statfs(dir);
    return Number(stats.bavail) * Number(stats.bsize);
}

function hostOf(url: string) {
    try {
        return new URL(url).host;
    } catch {
        return url;
    }
}

function throwIfAborted(signal?: AbortSignal) {
    if (signal?.aborted)
        throw new ModelDownloadError("DOWNLOAD_CANCELLED", "The download was cancelled before it started.");
}

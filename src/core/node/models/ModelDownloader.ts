import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {createModelDownloader, type ModelDownloader as LlamaModelDownloader} from "node-llama-cpp";
import {ModelLoadError} from "../../common/errors.js";
import type {DownloadProgress} from "../../common/models.js";
import {ModelDownloadError} from "./ModelDownloadError.js";
import {formatBytes as formatSize} from "../../common/formatBytes.js";

export type ModelDownloaderOptions = {
    /** Folder the verified file is saved in (created when missing). */
    dir: string,
    /** Free bytes on the disk that holds `dir`. Defaults to `fs.statfs` (`bavail * bsize`). */
    diskFreeBytes?: (dir: string) => Promise<number>,
    /** Space left free beyond the file itself. Defaults to `256 MiB`. */
    diskReserveBytes?: number,
    /** A transfer that receives nothing for this long is given up (what it got is kept for a resume). Defaults to `60 s`. */
    stallTimeoutMs?: number,
    /** Time allowed for the first response (status and size) from the server. Defaults to `30 s`. */
    connectTimeoutMs?: number,
    /** Shortest interval between two `onProgress` calls while downloading. Defaults to `200 ms`. */
    progressIntervalMs?: number
};

export type ModelDownloadRequest = {
    /** `https://` or `http://` URL, or a node-llama-cpp `hf:` URI. */
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
export const defaultProgressIntervalMs = 200;

/** Suffix of a download that has not been verified yet. node-llama-cpp adds `.ipull` while it is still transferring. */
export const partialSuffix = ".part";
const transferSuffix = ".ipull";
const ggufMagic = Buffer.from("GGUF", "ascii");

/**
 * Downloads a GGUF model with node-llama-cpp's downloader into `<name>.part`, checks its size,
 * GGUF magic and SHA-256, and only then renames it to `<name>`: a file that did not verify is
 * deleted and never offered. Interrupted transfers (cancel, crash, dropped connection) resume
 * from node-llama-cpp's progress file, in 5 MiB chunks. A download that the disk cannot hold is
 * refused before it starts.
 */
export class ModelDownloader {
    public readonly dir: string;
    private readonly _diskFreeBytes: (dir: string) => Promise<number>;
    private readonly _diskReserveBytes: number;
    private readonly _stallTimeoutMs: number;
    private readonly _connectTimeoutMs: number;
    private readonly _progressIntervalMs: number;

    public constructor({
        dir, diskFreeBytes = statfsFreeBytes, diskReserveBytes = defaultDiskReserveBytes, stallTimeoutMs = defaultStallTimeoutMs,
        connectTimeoutMs = defaultConnectTimeoutMs, progressIntervalMs = defaultProgressIntervalMs
    }: ModelDownloaderOptions) {
        this.dir = path.resolve(dir);
        this._diskFreeBytes = diskFreeBytes;
        this._diskReserveBytes = diskReserveBytes;
        this._stallTimeoutMs = stallTimeoutMs;
        this._connectTimeoutMs = connectTimeoutMs;
        this._progressIntervalMs = progressIntervalMs;
    }

    /** Paths used for a file name: the final file, the unverified `.part`, and node-llama-cpp's transfer file. */
    public pathsFor(fileName: string) {
        const finalPath = path.join(this.dir, fileName);
        return {finalPath, partPath: finalPath + partialSuffix, transferPath: finalPath + partialSuffix + transferSuffix};
    }

    public async download(request: ModelDownloadRequest): Promise<ModelDownloadResult> {
        const {url, headers = {}, signal, onProgress} = request;
        const expectedSha256 = request.sha256?.toLowerCase() ?? null;
        if (expectedSha256 != null && !/^[0-9a-f]{64}$/.test(expectedSha256))
            throw new ModelDownloadError("DOWNLOAD_FAILED", `The expected SHA-256 must be 64 hex digits, got "${request.sha256}".`);

        const fileName = request.fileName ?? fileNameFromUrl(url);
        if (fileName === "" || fileName !== path.basename(fileName) || fileName.startsWith("."))
            throw new ModelDownloadError("DOWNLOAD_FAILED", `"${fileName}" is not usable as a file name.`, {url});

        throwIfAborted(signal);
        fs.mkdirSync(this.dir, {recursive: true});
        const {finalPath, partPath, transferPath} = this.pathsFor(fileName);

        const existing = await this._checkExisting(finalPath, request.expectedBytes ?? null, expectedSha256, signal);
        if (existing != null)
            return existing;

        // Our own first request: a clear answer for 404/500 (node-llama-cpp would retry a 5xx for minutes), and the size.
        const remote = isHttpUrl(url) ? await this._probe(url, headers, signal) : null;
        const expectedBytes = request.expectedBytes ?? null;
        if (expectedBytes != null && remote?.totalBytes != null && remote.totalBytes !== expectedBytes)
            throw new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
                `The server offers ${remote.totalBytes} bytes but ${expectedBytes} were expected ` +
                `(${remote.totalBytes - expectedBytes > 0 ? "+" : ""}${remote.totalBytes - expectedBytes}): not the file that was asked for. Nothing was downloaded.`,
                {url, expectedBytes, remoteBytes: remote.totalBytes});

        const totalBytes = remote?.totalBytes ?? expectedBytes;
        if (totalBytes != null)
            await this._ensureRoom(totalBytes, [transferPath, partPath]);

        const transfer = await this._transfer({url, headers, partName: path.basename(partPath), transferPath, totalBytes, signal, onProgress});

        const verifyStarted = performance.now();
        const fileBytes = fs.statSync(partPath).size;
        const mustBe = expectedBytes ?? totalBytes;
        if (mustBe != null && fileBytes !== mustBe) {
            fs.rmSync(partPath, {force: true});
            throw new ModelDownloadError("DOWNLOAD_SIZE_MISMATCH",
                `The downloaded file has ${fileBytes} bytes, ${mustBe} were expected (${fileBytes - mustBe} off). It was deleted.`,
                {url, expectedBytes: mustBe, actualBytes: fileBytes});
        }
        if (!startsWithGgufMagic(partPath)) {
            fs.rmSync(partPath, {force: true});
            throw new ModelLoadError("MODEL_NOT_GGUF", "The downloaded file is not a GGUF model (it does not start with \"GGUF\"). It was deleted.", {url});
        }
        const sha256 = await sha256File(partPath, {
            signal,
            onProgress: (hashedBytes) => onProgress?.({phase: "verifying", downloadedBytes: hashedBytes, totalBytes: fileBytes, bytesPerSecond: 0, etaSeconds: null})
        });
        if (expectedSha256 != null && sha256 !== expectedSha256) {
            fs.rmSync(partPath, {force: true});
            throw new ModelDownloadError("DOWNLOAD_CHECKSUM_MISMATCH",
                `The downloaded file's SHA-256 is ${sha256}, ${expectedSha256} was expected. The file was deleted and is not offered.`,
                {url, expectedSha256, actualSha256: sha256, bytes: fileBytes});
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
            response = await fetch(url, {
                headers: {...headers, "accept-encoding": "identity", range: "bytes=0-0"},
                redirect: "follow",
                signal: signal != null ? AbortSignal.any([signal, timeout]) : timeout
            });
        } catch (error) {
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

    private async _ensureRoom(totalBytes: number, partialPaths: string[]) {
        const alreadyAllocated = partialPaths.reduce((sum, partial) => {
            try {
                const stat = fs.statSync(partial);
                return sum + Math.min(stat.blocks * 512, totalBytes);
            } catch {
                return sum;
            }
        }, 0);
        const neededBytes = Math.max(0, totalBytes - alreadyAllocated) + this._diskReserveBytes;
        const freeBytes = await this._diskFreeBytes(this.dir);
        if (freeBytes < neededBytes)
            throw new ModelDownloadError("DOWNLOAD_NO_SPACE",
                `Not enough disk space in ${this.dir}: the download needs ${formatSize(neededBytes)} ` +
                `(${formatSize(totalBytes - Math.min(alreadyAllocated, totalBytes))} still to fetch + ${formatSize(this._diskReserveBytes)} kept free), ` +
                `${formatSize(freeBytes)} is free: ${formatSize(neededBytes - freeBytes)} short. Nothing was downloaded.`,
                {dir: this.dir, neededBytes, freeBytes, shortBytes: neededBytes - freeBytes});
    }

    private async _transfer({url, headers, partName, transferPath, totalBytes, signal, onProgress}: {
        url: string, headers: Record<string, string>, partName: string, transferPath: string, totalBytes: number | null,
        signal?: AbortSignal, onProgress?: (progress: DownloadProgress) => void
    }) {
        const controller = new AbortController();
        let stalled = false;
        const onAbort = () => controller.abort(signal?.reason);
        signal?.addEventListener("abort", onAbort, {once: true});

        let startBytes: number | null = null;
        let lastBytes = 0;
        let lastChangeAt = performance.now();
        let lastReportAt = 0;
        const started = performance.now();
        const report = (downloadedBytes: number, total: number, force = false) => {
            const now = performance.now();
            if (downloadedBytes !== lastBytes) {
                lastBytes = downloadedBytes;
                lastChangeAt = now;
            }
            if (onProgress == null || (!force && now - lastReportAt < this._progressIntervalMs))
                return;
            lastReportAt = now;
            const seconds = (now - started) / 1000;
            const bytesPerSecond = seconds > 0 ? Math.max(0, downloadedBytes - (startBytes ?? 0)) / seconds : 0;
            const remaining = Math.max(0, total - downloadedBytes);
            onProgress({
                phase: "downloading", downloadedBytes, totalBytes: total, bytesPerSecond,
                etaSeconds: total > 0 && bytesPerSecond > 0 ? remaining / bytesPerSecond : null
            });
        };
        const watchdog = setInterval(() => {
            if (performance.now() - lastChangeAt > this._stallTimeoutMs) {
                stalled = true;
                controller.abort(new Error("stalled"));
            }
        }, Math.max(50, Math.min(1000, this._stallTimeoutMs / 4)));

        let downloader: LlamaModelDownloader | null = null;
        try {
            downloader = await raceAbort(createModelDownloader({
                modelUri: url,
                dirPath: this.dir,
                fileName: partName,
                headers,
                showCliProgress: false,
                skipExisting: true,
                deleteTempFileOnCancel: false,
                onProgress: ({downloadedSize, totalSize}) => report(downloadedSize, totalSize)
            }), controller.signal);
            startBytes = downloader.downloadedSize;
            lastBytes = startBytes;
            report(startBytes, downloader.totalSize || (totalBytes ?? 0), true);
            await downloader.download({signal: controller.signal});
            if (controller.signal.aborted)
                throw controller.signal.reason; // ipull can return normally after a cancel
            report(downloader.totalSize, downloader.totalSize, true);
            return {
                resumedFromBytes: startBytes,
                transferredBytes: Math.max(0, downloader.totalSize - startBytes),
                seconds: (performance.now() - started) / 1000
            };
        } catch (error) {
            if (controller.signal.aborted) {
                await downloader?.cancel({deleteTempFile: false}).catch(() => undefined);
                const kept = savedTransferBytes(transferPath, downloader?.totalSize || (totalBytes ?? 0));
                const keptText = kept > 0
                    ? `${kept} bytes are kept; run the same download again to resume from there.`
                    : `Nothing was kept yet (progress is saved in ${transferChunkBytes / 1024 / 1024} MiB pieces).`;
                if (stalled)
                    throw new ModelDownloadError("DOWNLOAD_FAILED",
                        `The download stalled: nothing arrived for ${Math.round(this._stallTimeoutMs / 1000)} s. ${keptText}`, {url, keptBytes: kept});
                throw new ModelDownloadError("DOWNLOAD_CANCELLED", `The download was cancelled. ${keptText}`, {url, keptBytes: kept});
            }
            const status = (error as {statusCode?: unknown}).statusCode;
            throw new ModelDownloadError("DOWNLOAD_FAILED",
                typeof status === "number"
                    ? `The server answered HTTP ${status} during the download of ${url}.`
                    : `The download of ${url} failed: ${describeNetworkError(error)}.`,
                {url, ...(typeof status === "number" ? {status} : {})}, error);
        } finally {
            clearInterval(watchdog);
            signal?.removeEventListener("abort", onAbort);
        }
    }
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

/** node-llama-cpp's downloader (ipull) writes and records progress in pieces of this size. */
const transferChunkBytes = 5 * 1024 * 1024;

/**
 * Bytes a transfer file holds for a resume: ipull appends its progress (JSON, per-chunk states,
 * `2` = complete) after the file's bytes, and only complete chunks are kept.
 */
function savedTransferBytes(transferPath: string, totalBytes: number): number {
    let fd: number | null = null;
    try {
        fd = fs.openSync(transferPath, "r");
        const metadataBytes = fs.fstatSync(fd).size - totalBytes;
        if (totalBytes <= 0 || metadataBytes <= 0 || metadataBytes > 1 << 20)
            return 0;
        const metadata = Buffer.alloc(metadataBytes);
        fs.readSync(fd, metadata, 0, metadataBytes, totalBytes);
        const progress = JSON.parse(metadata.toString("utf8")) as {chunks?: unknown[], chunkSize?: unknown};
        const chunkSize = typeof progress.chunkSize === "number" ? progress.chunkSize : transferChunkBytes;
        return (progress.chunks ?? []).reduce<number>((sum, chunk, index) =>
            (chunk === 2 ? sum + Math.max(0, Math.min(chunkSize, totalBytes - index * chunkSize)) : sum), 0);
    } catch {
        return 0;
    } finally {
        if (fd != null)
            fs.closeSync(fd);
    }
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

function fileNameFromUrl(url: string): string {
    if (url.startsWith("hf:")) {
        const last = url.slice(3).split("#")[0]!.split("/").pop() ?? "";
        return last.toLowerCase().endsWith(".gguf") ? last : "";
    }
    try {
        return decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
    } catch {
        return "";
    }
}

function isHttpUrl(url: string) {
    return /^https?:\/\//i.test(url);
}

function hostOf(url: string) {
    try {
        return new URL(url).host;
    } catch {
        return url;
    }
}

function describeNetworkError(error: unknown): string {
    const cause = (error as {cause?: {code?: string, message?: string}})?.cause;
    if (cause?.code != null)
        return `${cause.code}${cause.message != null && cause.message !== "" ? ` (${cause.message})` : ""}`;
    if (cause?.message != null && cause.message !== "")
        return cause.message;
    return error instanceof Error ? error.message : String(error);
}

function throwIfAborted(signal?: AbortSignal) {
    if (signal?.aborted)
        throw new ModelDownloadError("DOWNLOAD_CANCELLED", "The download was cancelled before it started.");
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted)
        return Promise.reject(signal.reason);

    return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, {once: true});
        work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
}

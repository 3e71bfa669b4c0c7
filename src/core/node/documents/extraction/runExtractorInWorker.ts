import fs from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";
import {Worker} from "node:worker_threads";
import {settleWithReply, watchExtraction} from "./extractionWatch.js";
import {pagesOfReply, type ExtractionRequest} from "./extractorMessages.js";
import {AttachmentUnreadableError, type ExtractedPage, type ExtractorIsolation} from "./types.js";
import type {ExtractorLimits} from "./runExtractor.js";

/**
 * Where extraction runs in this process. In Electron, `fork` would start Electron itself, which the
 * packaged app's fuses forbid to act as Node (RunAsNode), and a utility process cannot start
 * another: the desktop core extracts in a worker thread instead.
 */
export function extractorIsolationHere(): ExtractorIsolation {
    return process.versions.electron != null ? "worker" : "process";
}

/** The extractor entry beside a bundle that inlined it (`npm run build:electron` writes out/core/extractorEntry.mjs beside utilityEntry.mjs). */
const bundledEntryName = "extractorEntry.mjs";
const sourceOrChunkEntry = /^(?:extractorEntry\.(?:ts|m?js)|chunk-\w+\.m?js)$/;
/** Memory this process may grow by beyond the worker's heap limit while it extracts: pdf.js's and zlib's buffers live outside the heap. */
const residentAllowanceMb = 512;

/**
 * Runs one extraction in a fresh worker thread, for where no process can be started. The worker's
 * JavaScript heap is capped (`resourceLimits`): past it the worker alone ends. It is terminated
 * when it takes longer than `timeoutMs`, and when this process's resident memory grows past the
 * heap limit plus `residentAllowanceMb` while it runs (buffers outside the heap). It gets none of
 * the core's environment. The readers (pdf.js, mammoth, htmlparser2) are JavaScript: a worker shares
 * the process's memory but cannot reach it except through its messages.
 */
export async function runExtractorInWorker(request: ExtractionRequest, limits: ExtractorLimits): Promise<ExtractedPage[]> {
    const name = request.name;
    const {extractorEntryUrl, extractorWorkerFlag} = await import("./extractorEntry.js");
    const entry = workerEntry(name, extractorEntryUrl);
    const started = performance.now();
    const startResidentBytes = process.memoryUsage.rss();
    const worker = new Worker(entry, {
        workerData: {[extractorWorkerFlag]: true},
        env: {},
        execArgv: [],
        stdout: true,
        stderr: true,
        resourceLimits: {maxOldGenerationSizeMb: limits.heapMb, maxYoungGenerationSizeMb: Math.min(limits.heapMb, 32)}
    });
    worker.stdout.resume();
    worker.stderr.resume();

    return await new Promise<ExtractedPage[]>((resolve, reject) => {
        const watch = watchExtraction(name, limits, reject, {
            stop: () => void worker.terminate(),
            residentBytes: async () => process.memoryUsage.rss() - startResidentBytes,
            maxResidentBytes: (limits.heapMb + residentAllowanceMb) * 1024 * 1024
        });
        worker.once("message", (raw: unknown) => settleWithReply(watch, resolve, reject, () => {
            const {pages} = pagesOfReply(name, raw);
            limits.onUsage?.({maxRssBytes: process.resourceUsage().maxRSS * 1024, elapsedMs: performance.now() - started});
            return pages;
        }));
        worker.once("error", (error: Error & {code?: string}) => watch.crashed(error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? `needed more than ${limits.heapMb} MB of memory to read and was stopped; it may be damaged or built to exhaust memory`
            : `could not be read: the extractor failed (${error.message.slice(0, 200)})`));
        worker.once("exit", (code) => watch.crashed(`could not be read: the extractor ended unexpectedly (status ${code})`));
        worker.postMessage(request);
    });
}

/**
 * The module the worker runs. From source (tests, web mode under tsx) a worker cannot load
 * TypeScript by itself: a small module imports the entry through tsx. In a bundle that inlined the
 * entry (the desktop core), the entry built beside it.
 */
function workerEntry(name: string, extractorEntryUrl: string): URL {
    const file = fileURLToPath(extractorEntryUrl);
    if (file.endsWith(".ts")) {
        const loader = `const {tsImport} = await import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}); await tsImport(${JSON.stringify(extractorEntryUrl)}, import.meta.url);`;
        return new URL(`data:text/javascript,${encodeURIComponent(loader)}`);
    }
    if (sourceOrChunkEntry.test(path.basename(file)))
        return new URL(extractorEntryUrl);
    const besideBundle = path.join(path.dirname(file), bundledEntryName);
    if (!fs.existsSync(besideBundle))
        throw new AttachmentUnreadableError(name, "extractor-crashed", "cannot be read here: this build of Cleanroom cannot start its document extractor");
    return pathToFileURL(besideBundle);
}

import {fork} from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {settleWithReply, watchExtraction} from "./extractionWatch.js";
import {pagesOfReply, type ExtractionRequest} from "./extractorMessages.js";
import {extractorIsolationHere, runExtractorInWorker} from "./runExtractorInWorker.js";
import {AttachmentUnreadableError, type ExtractedPage, type ExtractorIsolation, type ExtractorUsage} from "./types.js";

export type ExtractorLimits = {
    /** Where the extraction runs: a process of its own (the default), or a worker thread where no process can be started (`extractorIsolationHere`). */
    isolation?: ExtractorIsolation,
    timeoutMs: number,
    heapMb: number,
    signal?: AbortSignal,
    onUsage?: (usage: ExtractorUsage) => void
};

/** Resident memory allowed beyond the heap limit: Node itself, pdf.js's and zlib's buffers. */
const residentAllowanceMb = 512;
const pageSize = 4096;
const outOfMemoryReport = /heap out of memory|Reached heap limit|process out of memory|Allocation failed/i;
/** The extractor entry's file: its source, or a chunk of its own in an esbuild bundle split as the CLI's is (bin/cliBundle.mjs). */
const extractorEntryFile = /^(?:extractorEntry\.(?:ts|m?js)|chunk-\w+\.m?js)$/;

/**
 * Runs one extraction in a fresh Node process, so that a hostile file can at worst end that
 * process: its JavaScript heap is capped (`--max-old-space-size`), its resident memory is watched
 * and it is killed past the heap limit plus `residentAllowanceMb`, and it is killed when it takes
 * longer than `timeoutMs`. The file goes over the IPC channel and the text comes back the same way:
 * nothing is written to disk. The process gets no environment of the core's (no passphrase, no keys).
 */
export async function runExtractor(request: ExtractionRequest, limits: ExtractorLimits): Promise<ExtractedPage[]> {
    limits.signal?.throwIfAborted();
    if ((limits.isolation ?? extractorIsolationHere()) === "worker")
        return await runExtractorInWorker(request, limits);
    const {extractorEntryUrl, extractorProcessFlag} = await import("./extractorEntry.js");
    const entry = fileURLToPath(extractorEntryUrl);
    const name = request.name;
    // Bundled without splitting, the entry would be the whole bundle: forking it would start the app again.
    if (!extractorEntryFile.test(path.basename(entry)))
        throw new AttachmentUnreadableError(name, "extractor-crashed", "cannot be read here: this build of Cleanroom cannot start its document extractor process");
    const fromSource = entry.endsWith(".ts");
    const started = performance.now();
    const child = fork(entry, [], {
        execArgv: [...(fromSource ? ["--import", import.meta.resolve("tsx")] : []), `--max-old-space-size=${limits.heapMb}`],
        env: {[extractorProcessFlag]: "1", PATH: process.env.PATH ?? "", ...(process.env.TMPDIR != null ? {TMPDIR: process.env.TMPDIR} : {})},
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        serialization: "advanced"
    });
    // V8's out-of-memory report comes first and a native stack trace of any length after it: look at every chunk as it comes.
    let stderrTail = "";
    let ranOutOfMemory = false;
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (data: string) => {
        stderrTail = stderrTail.slice(-128) + data; // the report may be split between two chunks
        ranOutOfMemory ||= outOfMemoryReport.test(stderrTail);
    });

    return await new Promise<ExtractedPage[]>((resolve, reject) => {
        const watch = watchExtraction(name, limits, reject, {
            stop: () => {
                if (child.exitCode == null && child.signalCode == null)
                    child.kill("SIGKILL");
            },
            residentBytes: async () => child.pid == null ? null : Number((await fs.readFile(`/proc/${child.pid}/statm`, "utf8")).split(" ")[1]) * pageSize,
            maxResidentBytes: (limits.heapMb + residentAllowanceMb) * 1024 * 1024
        });
        child.on("message", (raw: unknown) => settleWithReply(watch, resolve, reject, () => {
            const {pages, maxRssBytes} = pagesOfReply(name, raw);
            limits.onUsage?.({maxRssBytes, elapsedMs: performance.now() - started});
            return pages;
        }));
        child.on("error", (error) => watch.crashed(`could not be read: the extractor process failed (${error.message})`));
        let handOverError: Error | null = null;
        // "close", not "exit": only once its stderr has ended is V8's out-of-memory report surely read.
        child.on("close", (code, signal) => {
            if (ranOutOfMemory)
                watch.crashed(`needed more than ${limits.heapMb} MB of memory to read and was stopped; it may be damaged or built to exhaust memory`);
            else if (handOverError != null)
                watch.crashed(`could not be handed to the extractor process (${handOverError.message})`);
            else
                watch.crashed(`could not be read: the extractor process ended unexpectedly (${code != null ? `status ${code}` : `signal ${signal}`})`);
        });
        child.send(request, (error) => {
            if (error == null)
                return;
            // A child that died while taking the file (out of memory) fails the send first: "close" says why.
            handOverError = error;
            child.kill("SIGKILL");
        });
    });
}

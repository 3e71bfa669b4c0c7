import {fork} from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describeBytes} from "./describeBytes.js";
import {ExtractionReplySchema, type ExtractionRequest} from "./extractorMessages.js";
import {AttachmentUnreadableError, type ExtractedPage, type ExtractorUsage} from "./types.js";

export type ExtractorLimits = {
    timeoutMs: number,
    heapMb: number,
    signal?: AbortSignal,
    onUsage?: (usage: ExtractorUsage) => void
};

/** How often the extractor's resident memory is checked against its limit. */
const memoryCheckIntervalMs = 100;
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
    const {extractorEntryUrl, extractorProcessFlag} = await import("./extractorEntry.js");
    const entry = fileURLToPath(extractorEntryUrl);
    const name = request.name;
    // Bundled without splitting (the desktop app's utility process, out/core/utilityEntry.mjs), the
    // entry would be the whole bundle: forking it would start the app again. And in Electron, fork
    // runs Electron itself, which the packaged app's fuses forbid to act as Node (RunAsNode).
    if (!extractorEntryFile.test(path.basename(entry)) || process.versions.electron != null)
        throw new AttachmentUnreadableError(name, "extractor-crashed", "cannot be read here: this build of Cleanroom cannot start its document extractor process");
    const fromSource = entry.endsWith(".ts");
    const maxResidentBytes = (limits.heapMb + residentAllowanceMb) * 1024 * 1024;
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
        let settled = false;
        const finish = (outcome: () => void) => {
            if (settled)
                return;
            settled = true;
            clearTimeout(timer);
            clearInterval(memoryWatch);
            limits.signal?.removeEventListener("abort", onAbort);
            if (child.exitCode == null && child.signalCode == null)
                child.kill("SIGKILL");
            outcome();
        };
        const crashed = (problem: string) => finish(() => reject(new AttachmentUnreadableError(name, "extractor-crashed", problem)));
        const timer = setTimeout(() => finish(() => reject(new AttachmentUnreadableError(name, "timeout",
            `took longer than ${limits.timeoutMs / 1000} s to read and was stopped; it may be damaged or built to stall readers`,
            {limitMs: limits.timeoutMs}))), limits.timeoutMs);
        const memoryWatch = setInterval(() => {
            if (child.pid == null)
                return;
            fs.readFile(`/proc/${child.pid}/statm`, "utf8").then((statm) => {
                const residentBytes = Number(statm.split(" ")[1]) * pageSize;
                if (residentBytes > maxResidentBytes)
                    crashed(`needed more than ${describeBytes(maxResidentBytes)} of memory to read and was stopped; it may be damaged or built to exhaust memory`);
            }, () => undefined);
        }, memoryCheckIntervalMs);
        const onAbort = () => finish(() => reject(limits.signal!.reason));
        limits.signal?.addEventListener("abort", onAbort, {once: true});

        child.on("message", (raw: unknown) => {
            const reply = ExtractionReplySchema.safeParse(raw);
            if (!reply.success) {
                crashed("could not be read: the extractor process answered something unexpected");
                return;
            }
            if (reply.data.type === "refused") {
                const {reason, problem, details} = reply.data;
                finish(() => reject(new AttachmentUnreadableError(name, reason, problem, details)));
                return;
            }
            const {pages, maxRssBytes} = reply.data;
            finish(() => {
                limits.onUsage?.({maxRssBytes, elapsedMs: performance.now() - started});
                resolve(pages);
            });
        });
        child.on("error", (error) => crashed(`could not be read: the extractor process failed (${error.message})`));
        let handOverError: Error | null = null;
        // "close", not "exit": only once its stderr has ended is V8's out-of-memory report surely read.
        child.on("close", (code, signal) => {
            if (ranOutOfMemory)
                crashed(`needed more than ${limits.heapMb} MB of memory to read and was stopped; it may be damaged or built to exhaust memory`);
            else if (handOverError != null)
                crashed(`could not be handed to the extractor process (${handOverError.message})`);
            else
                crashed(`could not be read: the extractor process ended unexpectedly (${code != null ? `status ${code}` : `signal ${signal}`})`);
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

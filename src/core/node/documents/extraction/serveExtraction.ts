import type {MessagePort} from "node:worker_threads";
import {ExtractionRequestSchema, type ExtractionReply} from "./extractorMessages.js";
import {AttachmentUnreadableError} from "./types.js";

/** The extractor process's work: one request in, one reply out, then exit (the core starts a fresh process per file). */
export function serveExtraction() {
    process.once("disconnect", () => process.exit(1)); // the core went away: nobody is waiting for the text
    process.once("message", (raw: unknown) => {
        void answer(raw).then((reply) => process.send!(reply, () => process.exit(0)));
    });
}

/** The same work in a worker thread (`runExtractorInWorker`): one request in, one reply out. */
export function serveExtractionInWorker(port: MessagePort) {
    port.once("message", (raw: unknown) => {
        void answer(raw).then((reply) => port.postMessage(reply));
    });
}

async function answer(raw: unknown): Promise<ExtractionReply> {
    const request = ExtractionRequestSchema.safeParse(raw);
    if (!request.success)
        return {type: "refused", reason: "extractor-crashed", problem: "could not be handed to the extractor process", details: {}};
    const {name} = request.data;
    try {
        // Each reader loaded only for its format: pdf.js alone is a few megabytes of JavaScript to compile.
        const pages = request.data.format === "html" ? (await import("./htmlText.js")).htmlText(request.data.text)
            : request.data.format === "pdf" ? await (await import("./pdfText.js")).pdfText(name, request.data.bytes)
                : await (await import("./docxText.js")).docxText(name, request.data.bytes, request.data.maxInflatedBytes);
        return {type: "extracted", pages, maxRssBytes: process.resourceUsage().maxRSS * 1024};
    } catch (error) {
        if (error instanceof AttachmentUnreadableError) {
            const details = Object.fromEntries(Object.entries(error.details).filter((entry): entry is [string, number | string] =>
                typeof entry[1] === "number" || typeof entry[1] === "string"));
            return {type: "refused", reason: error.reason, problem: error.problem, details};
        }
        if (error instanceof RangeError)
            return {type: "refused", reason: "corrupt", problem: "is damaged: its structure is nested too deeply to read", details: {}};
        return {type: "refused", reason: "corrupt", problem: `is damaged and cannot be read (${String((error as Error)?.message ?? error).slice(0, 200)})`, details: {}};
    }
}

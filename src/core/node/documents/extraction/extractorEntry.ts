// The document extractor's entry. `runExtractor` forks this module's own file, whichever form it
// takes, since a module knows its URL: src/…/extractorEntry.ts under tsx (tests, web mode), or the
// chunk esbuild split off for it in the compiled CLI (out/cli/<build>/chunk-….mjs), which
// `runExtractor` reaches by a dynamic import. Where no process can be started (the desktop core),
// `runExtractorInWorker` runs it as a worker thread: from source, or as out/core/extractorEntry.mjs.
// Imported for its URL, it does nothing else.
import {isMainThread, parentPort, workerData} from "node:worker_threads";

/** Set in the environment of the extractor process only. */
export const extractorProcessFlag = "CLEANROOM_DOCUMENT_EXTRACTOR";
/** Set in the extractor worker's `workerData` only. */
export const extractorWorkerFlag = "cleanroomDocumentExtractor";
export const extractorEntryUrl = import.meta.url;

if (process.env[extractorProcessFlag] === "1" && process.send != null)
    void import("./serveExtraction.js").then(({serveExtraction}) => serveExtraction());
else if (!isMainThread && parentPort != null && (workerData as Record<string, unknown> | null)?.[extractorWorkerFlag] === true)
    void import("./serveExtraction.js").then(({serveExtractionInWorker}) => serveExtractionInWorker(parentPort!));

// The document extractor's process: `runExtractor` forks this module's own file, whichever form
// it takes, since a module knows its URL: src/…/extractorEntry.ts under tsx (tests, web mode), or
// the chunk esbuild split off for it in the compiled CLI (out/cli/<build>/chunk-….mjs), which
// `runExtractor` reaches by a dynamic import. Imported for its URL, it does nothing else.

/** Set in the environment of the extractor process only. */
export const extractorProcessFlag = "CLEANROOM_DOCUMENT_EXTRACTOR";
export const extractorEntryUrl = import.meta.url;

if (process.env[extractorProcessFlag] === "1" && process.send != null)
    void import("./serveExtraction.js").then(({serveExtraction}) => serveExtraction());

// `node <bundle>/main.mjs FILE [process|worker]`: extracts FILE and prints the document as JSON,
// or {reason, message} for a refusal. The document-extraction test bundles this file as the CLI is
// bundled (esbuild, split at dynamic imports) and as the desktop core is (one file, the extractor's
// entry beside it) to run extraction from compiled JavaScript.
import {extractDocument} from "../../src/core/node/documents/extraction/extractDocument.js";
import {AttachmentUnreadableError} from "../../src/core/node/documents/extraction/types.js";

try {
    process.stdout.write(JSON.stringify(await extractDocument({kind: "path", path: process.argv[2]!}, {extractorIsolation: process.argv[3] === "worker" ? "worker" : "process"})) + "\n");
} catch (error) {
    if (!(error instanceof AttachmentUnreadableError))
        throw error;
    process.stdout.write(JSON.stringify({reason: error.reason, message: error.message}) + "\n");
}

import path from "node:path";
import {pathToFileURL} from "node:url";
import type {Plugin} from "vitest/config";
import {testBuildScript} from "../helpers/testBuild.js";

const extractorEntrySource = path.join("src", "core", "node", "documents", "extraction", "extractorEntry.ts");

/**
 * The document extractor that a core running in a test's own process forks: the compiled one, as users run it. The
 * extractor forks its entry module's own file (runExtractor.ts), which for a core imported from source is
 * extractorEntry.ts, started through tsx: about a CPU-second a document to compile its graph again (pdf.js,
 * mammoth, the decoders), in every fork. Here `extractorEntry.ts` resolves to the test build's extractorEntry.mjs
 * (test/setup/testBundle.ts, built by compiledCli.ts before any file runs), which Node loads as it is; runExtractor
 * then forks that file with plain node.
 */
export function compiledExtractor(): Plugin {
    return {
        name: "cleanroom-compiled-extractor",
        enforce: "pre",
        async resolveId(source, importer) {
            if (importer == null || path.basename(source, ".js") !== "extractorEntry")
                return null;
            const resolved = path.resolve(path.dirname(importer), source.replace(/\.js$/, ".ts"));
            if (!resolved.endsWith(extractorEntrySource))
                return null;
            // A file URL: Vite would take an absolute path for one under the project root and import it as /out/….
            return {id: pathToFileURL(await testBuildScript("extractorEntry")).href, external: true};
        }
    };
}

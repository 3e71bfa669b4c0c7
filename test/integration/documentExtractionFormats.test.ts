import {execFileSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";
import {extractDocument} from "../../src/core/node/documents/extraction/extractDocument.js";
import type {DocumentSource} from "../../src/core/node/documents/extraction/types.js";
import {docxFile, imageOnlyPdf, textPdf} from "../helpers/documentFixtures.js";
import {tempDir} from "../helpers/tempCore.js";

// Document extraction's claims that hold no bound on the clock; the hostile corpus refused within a bound, and the
// extractors stopped at their time limit, are in documentExtraction.test.ts (run alone).
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function saved(dir: string, name: string, bytes: Uint8Array | string): DocumentSource & {kind: "path"} {
    const file = path.join(dir, name);
    fs.writeFileSync(file, bytes);
    return {kind: "path", path: file};
}

describe.skipIf(process.platform !== "linux")("document extraction: formats by content", () => {
    it("a 12-page PDF named .bin: a page per page, the known sentence on page 3 and nowhere else", async () => {
        const dir = tempDir("extract-pdf");
        const sentence = "The indemnity cap is four hundred thousand euros.";
        const document = await extractDocument(saved(dir, "contract.bin", await textPdf(12, {3: sentence})));
        expect(document.format).toBe("pdf");
        expect(document.name).toBe("contract.bin");
        expect(document.pages.map((page) => page.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        expect(document.pages[2]!.text).toBe(`This is page 3 of the report.\n${sentence}`);
        expect(document.pages.filter((page) => page.text.includes("indemnity")).map((page) => page.page)).toEqual([3]);
    });

    it("a DOCX named .txt is read as Word, paragraph by paragraph", async () => {
        const dir = tempDir("extract-docx");
        const document = await extractDocument(saved(dir, "minutes.txt", await docxFile(["Minutes of the board meeting.", "The merger is approved, ünanimously."])));
        expect(document).toMatchObject({format: "docx", name: "minutes.txt"});
        expect(document.pages).toEqual([{page: 1, text: "Minutes of the board meeting.\n\nThe merger is approved, ünanimously."}]);
    });

    it("source code in UTF-16 (with a byte order mark, or little- or big-endian without one) and UTF-8, whatever its extension", async () => {
        const dir = tempDir("extract-code");
        const code = "import {readFile} from \"node:fs/promises\";\n\nexport async function keyOf(file: string) {\n    const key = await readFile(file, \"utf8\"); // naïve\n    return key.trim();\n}\n";
        const bigEndian = Buffer.from(code, "utf16le").swap16();
        const variants: Array<[string, Uint8Array]> = [
            ["keys.ts", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(code, "utf16le")])],
            ["keys.weird-extension", Buffer.from(code, "utf16le")],
            ["keys", bigEndian],
            ["keys.md", Buffer.from(code, "utf8")]
        ];
        for (const [name, bytes] of variants) {
            const document = await extractDocument(saved(dir, name, bytes));
            expect({name, format: document.format, text: document.pages[0]!.text}).toEqual({name, format: "code", text: code});
        }
    });

    it("an HTML page named .dat: its title and visible text, without scripts, styles or markup", async () => {
        const dir = tempDir("extract-html");
        const html = `<!DOCTYPE html><html><head><title>Terms &amp; conditions</title><style>body { color: red }</style>
            <script>window.secret = "SCRIPT_TEXT";</script></head><body><h1>Terms</h1><p>Payment is due in   30 days.</p>
            <noscript>NOSCRIPT_TEXT</noscript><table><tr><td>Fee</td><td>&euro;12</td></tr></table><script>track("SCRIPT_TEXT_2")</script></body></html>`;
        const document = await extractDocument(saved(dir, "terms.dat", html));
        expect(document.format).toBe("html");
        expect(document.pages).toEqual([{page: 1, text: "Terms & conditions\n\nTerms\n\nPayment is due in 30 days.\n\nFee\t€12"}]);
    });

    it("Markdown and plain text are told apart by their marks; bytes from a web upload read like a file, named by the last part of their name", async () => {
        const markdown = "# Plan\n\nSee [the notes](notes.md).\n\n- first step\n- second step\n";
        const prose = "Dear team,\nthe meeting moves to Thursday.\nRegards\n";
        expect(await extractDocument({kind: "bytes", name: "C:\\Users\\ann\\plan", bytes: Buffer.from(markdown)})).toMatchObject({name: "plan", format: "markdown"});
        const letter = await extractDocument({kind: "bytes", name: "letter.md", bytes: Buffer.from(prose.replace(/\n/g, "\r\n"))});
        expect(letter).toEqual({name: "letter.md", format: "text", bytes: prose.length + 3, pages: [{page: 1, text: prose}]});
    });
});

describe.skipIf(process.platform !== "linux")("document extraction from compiled JavaScript", () => {
    it("bundled as the CLI is (esbuild, split at dynamic imports), plain node extracts a PDF in a process of its own and refuses a scan", async () => {
        const esbuild = await import("esbuild");
        fs.mkdirSync(path.join(repoRoot, "out"), {recursive: true});
        // Inside the checkout, as out/cli is: the packages left out of the bundle resolve from its node_modules.
        const outdir = fs.mkdtempSync(path.join(repoRoot, "out", "extraction-bundle-"));
        try {
            await esbuild.build({
                absWorkingDir: repoRoot, entryPoints: {main: "test/helpers/extractDocumentMain.ts"}, outdir, outExtension: {".js": ".mjs"},
                chunkNames: "chunk-[hash]", bundle: true, splitting: true, format: "esm", platform: "node", target: "node20", packages: "external", logLevel: "silent"
            });
            const extractorChunks = fs.readdirSync(outdir).filter((file) => fs.readFileSync(path.join(outdir, file), "utf8").includes("\"CLEANROOM_DOCUMENT_EXTRACTOR\""));
            expect(extractorChunks, "the extractor's entry is a chunk of its own, not in main.mjs").toEqual([expect.stringMatching(/^chunk-\w+\.mjs$/)]);

            const dir = tempDir("extract-bundled");
            const run = (source: DocumentSource & {kind: "path"}) => JSON.parse(execFileSync(process.execPath, [path.join(outdir, "main.mjs"), source.path],
                {encoding: "utf8", env: {PATH: process.env.PATH, TMPDIR: process.env.TMPDIR}})) as unknown;
            expect(run(saved(dir, "bundled.pdf", await textPdf(3, {3: "Read by compiled code."})))).toMatchObject({
                format: "pdf", pages: [{page: 1}, {page: 2}, {page: 3, text: "This is page 3 of the report.\nRead by compiled code."}]
            });
            expect(run(saved(dir, "scan.pdf", await imageOnlyPdf()))).toEqual({
                reason: "scanned-pdf", message: "scan.pdf: has no text layer on any of its 2 pages: it looks scanned, and no OCR is done"
            });
        } finally {
            fs.rmSync(outdir, {recursive: true, force: true});
        }
    });

    it("bundled as the desktop core is (one file, the extractor's entry built beside it), plain node extracts a PDF in a worker thread and refuses a scan", async () => {
        const esbuild = await import("esbuild");
        fs.mkdirSync(path.join(repoRoot, "out"), {recursive: true});
        const outdir = fs.mkdtempSync(path.join(repoRoot, "out", "extraction-desktop-bundle-"));
        try {
            const common = {absWorkingDir: repoRoot, bundle: true, format: "esm", platform: "node", target: "node20", packages: "external", logLevel: "silent"} as const;
            // As `npm run build:electron` builds out/core/utilityEntry.mjs and out/core/extractorEntry.mjs.
            await esbuild.build({...common, entryPoints: ["test/helpers/extractDocumentMain.ts"], outfile: path.join(outdir, "main.mjs")});
            await esbuild.build({...common, entryPoints: ["src/core/node/documents/extraction/extractorEntry.ts"], outfile: path.join(outdir, "extractorEntry.mjs")});

            const dir = tempDir("extract-desktop-bundled");
            const run = (source: DocumentSource & {kind: "path"}, isolation: string) => JSON.parse(execFileSync(process.execPath, [path.join(outdir, "main.mjs"), source.path, isolation],
                {encoding: "utf8", env: {PATH: process.env.PATH, TMPDIR: process.env.TMPDIR}})) as unknown;
            const pdf = saved(dir, "desktop.pdf", await textPdf(2, {2: "Read by the desktop build."}));
            expect(run(pdf, "worker")).toMatchObject({format: "pdf", pages: [{page: 1}, {page: 2, text: "This is page 2 of the report.\nRead by the desktop build."}]});
            expect(run(saved(dir, "scan.pdf", await imageOnlyPdf()), "worker")).toEqual({
                reason: "scanned-pdf", message: "scan.pdf: has no text layer on any of its 2 pages: it looks scanned, and no OCR is done"
            });
            // A process cannot be started from this one file: it would be the whole bundle.
            expect(run(pdf, "process")).toEqual({reason: "extractor-crashed", message: "desktop.pdf: cannot be read here: this build of Cleanroom cannot start its document extractor process"});
        } finally {
            fs.rmSync(outdir, {recursive: true, force: true});
        }
    });
});

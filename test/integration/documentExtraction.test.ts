import {execFileSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {extractDocument} from "../../src/core/node/documents/extraction/extractDocument.js";
import {AttachmentUnreadableError, type DocumentSource, type ExtractDocumentOptions} from "../../src/core/node/documents/extraction/types.js";
import {deeplyNestedPdf, docxFile, docxZipBomb, encryptedPdf, imageOnlyPdf, textPdf} from "../helpers/documentFixtures.js";
import {tempDir} from "../helpers/tempCore.js";

// The claims on a bound of the clock: the hostile corpus refused within one, extractors stopped at their time limit. Those that hold
// none (formats by content, compiled JavaScript) are in documentExtractionFormats.test.ts, which runs with the other files.
/** A hostile file is refused within this (the extractor's own limit is 30 s; most are refused before any process starts). */
const refusalBoundMs = 20_000;

async function refusal(source: DocumentSource, options: ExtractDocumentOptions = {}) {
    const started = performance.now();
    const error = await extractDocument(source, options).then(() => null, (failure: unknown) => failure);
    const elapsedMs = performance.now() - started;
    expect(error).toBeInstanceOf(AttachmentUnreadableError);
    const refused = error as AttachmentUnreadableError;
    expect(refused.code).toBe("ATTACHMENT_UNREADABLE");
    return {reason: refused.reason, message: refused.message, elapsedMs};
}

function saved(dir: string, name: string, bytes: Uint8Array | string): DocumentSource & {kind: "path"} {
    const file = path.join(dir, name);
    fs.writeFileSync(file, bytes);
    return {kind: "path", path: file};
}

/** Extractor processes this test process started that are still running (Linux: their parent is us, their script the extractor's). */
function runningExtractors(): number[] {
    return fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
        try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
            const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            return parent === process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("extractorEntry") ? [Number(pid)] : [];
        } catch {
            return [];
        }
    });
}

describe.skipIf(process.platform !== "linux")("document extraction: a hostile corpus is refused within a bound, the caller alive", () => {
    const dir = tempDir("extract-hostile");
    const cases: Array<{what: string, source: () => Promise<DocumentSource> | DocumentSource, reason: string, message: RegExp}> = [
        {
            what: "a binary file",
            source: () => saved(dir, "photo.txt", Buffer.from(Array.from({length: 4096}, (_, index) => (index * 131 + 7) % 256))),
            reason: "binary", message: /^photo\.txt: looks like a binary file/
        },
        {
            what: "an image-only PDF",
            source: async () => saved(dir, "scan.pdf", await imageOnlyPdf()),
            reason: "scanned-pdf", message: /^scan\.pdf: has no text layer on any of its 2 pages: it looks scanned, and no OCR is done$/
        },
        {
            what: "an encrypted PDF",
            source: () => saved(dir, "locked.pdf", encryptedPdf()),
            reason: "encrypted-pdf", message: /^locked\.pdf: is an encrypted PDF that needs a password; save a copy without one and attach that$/
        },
        {
            what: "a truncated PDF",
            source: async () => {
                const whole = await textPdf(20);
                return saved(dir, "cut.pdf", whole.subarray(0, Math.floor(whole.byteLength * 0.6)));
            },
            reason: "corrupt", message: /^cut\.pdf: is a damaged or cut-short PDF: it has no end-of-file marker$/
        },
        {
            what: "a PDF with 100,000 nested arrays and dictionaries",
            source: () => saved(dir, "nested.pdf", deeplyNestedPdf(100_000)),
            reason: "corrupt", message: /^nested\.pdf: is a damaged PDF: its structure is nested too deeply to read$/
        },
        {
            what: "a truncated DOCX",
            source: async () => {
                const whole = await docxFile(["Half of this document is missing."]);
                return saved(dir, "half.docx", whole.subarray(0, Math.floor(whole.byteLength * 0.7)));
            },
            reason: "corrupt", message: /^half\.docx: is damaged or cut short: its ZIP directory is missing$/
        },
        {
            what: "a DOCX zip bomb (1 GB of zeros in word/document.xml)",
            source: async () => saved(dir, "bomb.docx", await docxZipBomb(1 << 30)),
            reason: "inflated-too-large", message: /^bomb\.docx: would unpack to 1 GB, over the limit of 200 MB \(a "zip bomb"\); nothing was unpacked past the limit$/
        },
        {
            what: "a DOCX zip bomb whose directory lies about its size",
            source: async () => saved(dir, "liar.docx", await docxZipBomb(1 << 30, 2048)),
            reason: "inflated-too-large", message: /^liar\.docx: would unpack to more than 200 MB \(its directory said [\d.]+ KB\), over the limit of 200 MB/
        },
        {
            what: "a 200 MB text file",
            source: () => {
                const file = path.join(dir, "huge.log");
                fs.writeFileSync(file, "");
                fs.truncateSync(file, 200 * 1024 * 1024);
                return {kind: "path", path: file};
            },
            reason: "too-large", message: /^huge\.log: is 200 MB; the limit is 50 MB$/
        },
        {what: "/dev/zero", source: () => ({kind: "path", path: "/dev/zero"}), reason: "not-a-file", message: /^zero: is a device, not a file$/},
        {
            what: "a FIFO nobody writes to",
            source: () => {
                const fifo = path.join(dir, "pipe.txt");
                execFileSync("mkfifo", [fifo]);
                return {kind: "path", path: fifo};
            },
            reason: "not-a-file", message: /^pipe\.txt: is a named pipe \(FIFO\), not a file$/
        },
        {
            what: "a folder",
            source: () => {
                fs.mkdirSync(path.join(dir, "reports.pdf"));
                return {kind: "path", path: path.join(dir, "reports.pdf")};
            },
            reason: "not-a-file", message: /^reports\.pdf: is a folder, not a file$/
        },
        {
            what: "/proc/self/environ",
            source: () => ({kind: "path", path: "/proc/self/environ"}),
            reason: "not-a-file", message: /^environ: is a system file \(\/proc\/\d+\/environ\), not a document$/
        },
        {what: "a missing file", source: () => ({kind: "path", path: path.join(dir, "gone.pdf")}), reason: "not-a-file", message: /^gone\.pdf: does not exist$/}
    ];

    it.each(cases)("$what: refused ($reason) with a message a person can act on", async ({source, reason, message}) => {
        const refused = await refusal(await source());
        expect(refused.reason).toBe(reason);
        expect(refused.message).toMatch(message);
        expect(refused.elapsedMs).toBeLessThan(refusalBoundMs);
        await expect.poll(runningExtractors).toEqual([]);
    });

    it("an extraction over its time limit is stopped and its process killed; a good file extracts afterwards", async () => {
        const pdf = await textPdf(3, {2: "Still readable afterwards."});
        const refused = await refusal({kind: "bytes", name: "slow.pdf", bytes: pdf}, {timeoutMs: 50});
        expect(refused).toMatchObject({reason: "timeout", message: "slow.pdf: took longer than 0.05 s to read and was stopped; it may be damaged or built to stall readers"});
        await expect.poll(runningExtractors).toEqual([]);
        const document = await extractDocument({kind: "bytes", name: "good.pdf", bytes: pdf});
        expect(document.pages[1]!.text).toContain("Still readable afterwards.");
    });

    it("an extractor that runs out of its memory is stopped (extractor-crashed); the caller goes on extracting", async () => {
        const bigHtml = `<html><body>${"<div><p>row</p><span>cell</span></div>".repeat(400_000)}</body></html>`;
        const refused = await refusal({kind: "bytes", name: "heavy.html", bytes: Buffer.from(bigHtml)}, {extractorHeapMb: 16});
        expect(refused.reason).toBe("extractor-crashed");
        expect(refused.message).toBe("heavy.html: needed more than 16 MB of memory to read and was stopped; it may be damaged or built to exhaust memory");
        await expect.poll(runningExtractors).toEqual([]);
        const document = await extractDocument({kind: "bytes", name: "light.html", bytes: Buffer.from("<html><body><p>Light page.</p></body></html>")});
        expect(document.pages[0]!.text).toBe("Light page.");
    });

    it("after the whole corpus, this process extracts a good PDF and DOCX as before", async () => {
        const pdf = await extractDocument({kind: "bytes", name: "after.pdf", bytes: await textPdf(4, {3: "Alive and well."})});
        expect(pdf.pages[2]!.text).toContain("Alive and well.");
        const docx = await extractDocument({kind: "bytes", name: "after.docx", bytes: await docxFile(["Also alive."])});
        expect(docx.pages[0]!.text).toBe("Also alive.");
    });
});

describe.skipIf(process.platform !== "linux")("document extraction in a worker thread, as the desktop core runs it (under Node here: Electron cannot run on this machine)", () => {
    const inWorker: ExtractDocumentOptions = {extractorIsolation: "worker"};
    const cases: Array<{what: string, source: () => Promise<DocumentSource>, reason: string, message: RegExp}> = [
        {what: "an image-only PDF", source: async () => ({kind: "bytes", name: "scan.pdf", bytes: await imageOnlyPdf()}), reason: "scanned-pdf", message: /^scan\.pdf: has no text layer/},
        {what: "an encrypted PDF", source: async () => ({kind: "bytes", name: "locked.pdf", bytes: encryptedPdf()}), reason: "encrypted-pdf", message: /^locked\.pdf: is an encrypted PDF/},
        {what: "a PDF with 100,000 nested arrays and dictionaries", source: async () => ({kind: "bytes", name: "nested.pdf", bytes: deeplyNestedPdf(100_000)}),
            reason: "corrupt", message: /^nested\.pdf: is a damaged PDF: its structure is nested too deeply to read$/},
        {what: "a DOCX zip bomb whose directory lies about its size", source: async () => ({kind: "bytes", name: "liar.docx", bytes: await docxZipBomb(1 << 30, 2048)}),
            reason: "inflated-too-large", message: /^liar\.docx: would unpack to more than 200 MB/}
    ];

    it("a PDF, a DOCX and an HTML page read as in a process of their own", async () => {
        const pdf = await extractDocument({kind: "bytes", name: "report.pdf", bytes: await textPdf(3, {2: "Read in a worker."})}, inWorker);
        expect(pdf.pages.map((page) => page.text)).toEqual(["This is page 1 of the report.", "This is page 2 of the report.\nRead in a worker.", "This is page 3 of the report."]);
        const docx = await extractDocument({kind: "bytes", name: "letter.docx", bytes: await docxFile(["Dear reader,", "Kind regards."])}, inWorker);
        expect(docx.pages).toEqual([{page: 1, text: "Dear reader,\n\nKind regards."}]);
        const html = await extractDocument({kind: "bytes", name: "page.html", bytes: Buffer.from("<html><head><title>T</title><script>x()</script></head><body><p>Visible.</p></body></html>")}, inWorker);
        expect(html.pages[0]!.text).toBe("T\n\nVisible.");
    });

    it.each(cases)("$what: refused ($reason) with the same message", async ({source, reason, message}) => {
        const refused = await refusal(await source(), inWorker);
        expect(refused.reason).toBe(reason);
        expect(refused.message).toMatch(message);
        expect(refused.elapsedMs).toBeLessThan(refusalBoundMs);
    });

    it("a worker over its time limit is stopped, one over its heap limit too (extractor-crashed); this process goes on extracting", async () => {
        const pdf = await textPdf(3, {2: "Still readable afterwards."});
        expect(await refusal({kind: "bytes", name: "slow.pdf", bytes: pdf}, {...inWorker, timeoutMs: 50})).toMatchObject({
            reason: "timeout", message: "slow.pdf: took longer than 0.05 s to read and was stopped; it may be damaged or built to stall readers"
        });
        const bigHtml = `<html><body>${"<div><p>row</p><span>cell</span></div>".repeat(400_000)}</body></html>`;
        expect(await refusal({kind: "bytes", name: "heavy.html", bytes: Buffer.from(bigHtml)}, {...inWorker, extractorHeapMb: 16})).toMatchObject({
            reason: "extractor-crashed", message: "heavy.html: needed more than 16 MB of memory to read and was stopped; it may be damaged or built to exhaust memory"
        });
        const document = await extractDocument({kind: "bytes", name: "good.pdf", bytes: pdf}, inWorker);
        expect(document.pages[1]!.text).toContain("Still readable afterwards.");
    });
});

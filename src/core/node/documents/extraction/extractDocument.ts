import {classifyText} from "./classifyText.js";
import {decodeText} from "./decodeText.js";
import {readSource} from "./readSource.js";
import {runExtractor, type ExtractorLimits} from "./runExtractor.js";
import {
    AttachmentUnreadableError, defaultExtractionTimeoutMs, defaultExtractorHeapMb, defaultMaxDocumentBytes, defaultMaxInflatedBytes,
    type DocumentFormat, type DocumentSource, type ExtractDocumentOptions, type ExtractedDocument, type ExtractedPage
} from "./types.js";

/**
 * Turns a file into text pages, judging its format by its content (never its name): PDF (text
 * layer, a page per page), DOCX, HTML, source code, Markdown or plain text (UTF-8 or UTF-16).
 * Text, code and Markdown are decoded in this process; PDF, DOCX and HTML are parsed in a
 * separate, short-lived process with time and memory limits (`runExtractor`). Anything that cannot
 * become text is refused with an `AttachmentUnreadableError` saying why (docs/documents.md).
 */
export async function extractDocument(source: DocumentSource, options: ExtractDocumentOptions = {}): Promise<ExtractedDocument> {
    const {name, bytes} = await readSource(source, options.maxBytes ?? defaultMaxDocumentBytes);
    options.signal?.throwIfAborted();
    const limits: ExtractorLimits = {
        isolation: options.extractorIsolation,
        timeoutMs: options.timeoutMs ?? defaultExtractionTimeoutMs,
        heapMb: options.extractorHeapMb ?? defaultExtractorHeapMb,
        signal: options.signal,
        onUsage: options.onExtractorUsage
    };
    const maxInflatedBytes = options.maxInflatedBytes ?? defaultMaxInflatedBytes;
    const document = (format: DocumentFormat, pages: ExtractedPage[]): ExtractedDocument => {
        if (pages.every((page) => page.text.trim() === ""))
            throw new AttachmentUnreadableError(name, "empty", "has no text in it");
        return {name, format, bytes: bytes.byteLength, pages};
    };

    const container = sniffContainer(bytes);
    if (container === "pdf")
        return document("pdf", await runExtractor({format: "pdf", name, bytes, maxInflatedBytes}, limits));
    if (container === "zip")
        return document("docx", await runExtractor({format: "docx", name, bytes, maxInflatedBytes}, limits));
    if (container === "office-binary")
        throw new AttachmentUnreadableError(name, "binary", "is an old-style Office file (.doc, .xls or .ppt), which Cleanroom does not read; save it as DOCX or PDF and attach that");

    const {text} = decodeText(name, bytes);
    const format = classifyText(text);
    if (format === "html")
        return document("html", await runExtractor({format: "html", name, text}, limits));
    return document(format, [{page: 1, text}]);
}

/** PDF: `%PDF-` in the first 1,024 bytes (readers allow junk before it). ZIP: a local file or empty-archive header. OLE2: the old Office container. */
function sniffContainer(bytes: Uint8Array): "pdf" | "zip" | "office-binary" | null {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024));
    if (head.includes("%PDF-", 0, "latin1"))
        return "pdf";
    if (head[0] === 0x50 && head[1] === 0x4b && (head[2] === 0x03 || head[2] === 0x05) && (head[3] === 0x04 || head[3] === 0x06))
        return "zip";
    if (head.subarray(0, 8).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])))
        return "office-binary";
    return null;
}

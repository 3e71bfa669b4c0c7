import {getDocumentProxy} from "unpdf";
import {AttachmentUnreadableError, type ExtractedPage} from "./types.js";

/** Acrobat accepts `%%EOF` anywhere in the last 1,024 bytes; a file without one there was cut short. */
const endMarkerWindow = 1024;

/**
 * The text layer of a PDF, one page per page (pdf.js through unpdf; no rendering, no OCR, no
 * fonts loaded, no scripts run; the process it runs in ends right after, so nothing is freed here). Refused: a file cut short (no end-of-file marker), one pdf.js
 * cannot parse, one that needs a password, and one with no text on any page (a scan).
 */
export async function pdfText(name: string, bytes: Uint8Array): Promise<ExtractedPage[]> {
    const tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(-endMarkerWindow).toString("latin1");
    if (!tail.includes("%%EOF"))
        throw new AttachmentUnreadableError(name, "corrupt", "is a damaged or cut-short PDF: it has no end-of-file marker");
    let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
    try {
        // pdf.js refuses a Buffer (it arrives as one over IPC).
        pdf = await getDocumentProxy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {verbosity: 0, disableFontFace: true, useSystemFonts: false, enableXfa: false, stopAtErrors: true});
    } catch (error) {
        throw pdfError(name, error);
    }
    try {
        const pages: ExtractedPage[] = [];
        for (let number = 1; number <= pdf.numPages; number++) {
            const page = await pdf.getPage(number);
            const content = await page.getTextContent();
            let text = "";
            for (const item of content.items) {
                if ("str" in item)
                    text += item.str + (item.hasEOL ? "\n" : "");
            }
            pages.push({page: number, text: text.replace(/[^\S\n]+/g, " ").replace(/ ?\n ?/g, "\n").trim()});
            page.cleanup();
        }
        if (pages.every((page) => page.text === ""))
            throw new AttachmentUnreadableError(name, "scanned-pdf",
                `has no text layer on any of its ${pages.length === 1 ? "page" : `${pages.length} pages`}: it looks scanned, and no OCR is done`,
                {pages: pages.length});
        return pages;
    } catch (error) {
        throw error instanceof AttachmentUnreadableError ? error : pdfError(name, error);
    }
}

function pdfError(name: string, error: unknown): AttachmentUnreadableError {
    const kind = (error as {name?: string})?.name;
    if (kind === "PasswordException")
        return new AttachmentUnreadableError(name, "encrypted-pdf", "is an encrypted PDF that needs a password; save a copy without one and attach that");
    if (error instanceof RangeError || /Maximum call stack size exceeded/.test(String((error as Error)?.message)))
        return new AttachmentUnreadableError(name, "corrupt", "is a damaged PDF: its structure is nested too deeply to read");
    return new AttachmentUnreadableError(name, "corrupt", `is a damaged PDF that cannot be read (${kind ?? "error"}: ${String((error as Error)?.message ?? error).slice(0, 200)})`);
}

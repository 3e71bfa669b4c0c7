import mammoth from "mammoth";
import {checkZipInflation, readZipDirectory} from "./checkZipInflation.js";
import {AttachmentUnreadableError, type ExtractedPage} from "./types.js";

/**
 * The text of a Word document (mammoth's raw text: paragraphs separated by blank lines), as one
 * page (DOCX has no fixed pages). The ZIP container is checked before mammoth opens it: a part
 * list without `word/document.xml` is not a Word document, and a container that would inflate
 * past `maxInflatedBytes` is refused without inflating it (see `checkZipInflation`).
 */
export async function docxText(name: string, bytes: Uint8Array, maxInflatedBytes: number): Promise<ExtractedPage[]> {
    const entries = readZipDirectory(name, bytes);
    if (!entries.some((entry) => entry.name === "word/document.xml"))
        throw new AttachmentUnreadableError(name, "binary", "is a ZIP archive but not a Word document (DOCX); Cleanroom reads DOCX, PDF, HTML, text and source code");
    checkZipInflation(name, bytes, entries, maxInflatedBytes);
    let text: string;
    try {
        text = (await mammoth.extractRawText({buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)})).value;
    } catch (error) {
        throw new AttachmentUnreadableError(name, "corrupt", `is a damaged Word document that cannot be read (${String((error as Error)?.message ?? error).slice(0, 200)})`);
    }
    return [{page: 1, text: text.replace(/\r\n?/g, "\n").replace(/\n{3,}/g, "\n\n").trim()}];
}

import type {ExtractedPage} from "./extraction/types.js";

/** A piece of a document as it is indexed and retrieved: its page and its first and last line on that page (from 1). */
export type DocumentChunk = {page: number, startLine: number, endLine: number, text: string};

/** About 300 tokens of English prose: a chunk small enough that several fit beside a conversation, large enough to hold a paragraph. */
export const chunkTargetChars = 1200;

/**
 * Cuts each page into chunks of whole lines of about `targetChars` characters; a line longer than
 * that is cut into pieces of that size (all with its line number). Blank chunks are left out.
 */
export function chunkDocument(pages: readonly ExtractedPage[], targetChars = chunkTargetChars): DocumentChunk[] {
    const chunks: DocumentChunk[] = [];
    for (const {page, text} of pages) {
        let lines: string[] = [];
        let startLine = 1;
        let size = 0;
        const flush = (endLine: number) => {
            const chunkText = lines.join("\n");
            if (chunkText.trim() !== "")
                chunks.push({page, startLine, endLine, text: chunkText});
            lines = [];
            size = 0;
            startLine = endLine + 1;
        };
        text.split(/\r?\n/).forEach((line, index) => {
            const lineNumber = index + 1;
            if (line.length > targetChars) {
                if (lines.length > 0)
                    flush(lineNumber - 1);
                for (let offset = 0; offset < line.length; offset += targetChars) {
                    lines = [line.slice(offset, offset + targetChars)];
                    startLine = lineNumber;
                    flush(lineNumber);
                }
                return;
            }
            if (size > 0 && size + line.length + 1 > targetChars)
                flush(lineNumber - 1);
            lines.push(line);
            size += line.length + 1;
        });
        if (lines.length > 0)
            flush(startLine + lines.length - 1);
    }
    return chunks;
}

import type {ExtractedPage} from "./extraction/types.js";

/** A chunk of one of the conversation's documents, as retrieval hands it to a turn. */
export type RetrievedPassage = {
    /** The stored attachment, or null for one that arrives with this turn (stored once the turn is accepted). */
    attachmentId: number | null,
    /** For a document that arrives with this turn: its place among the turn's documents retrieved from (names may repeat); null for a stored one. */
    pendingIndex: number | null,
    name: string,
    page: number,
    startLine: number,
    endLine: number,
    text: string
};

/** Pages are kept in one text column, separated by a form feed (as `pdftotext` separates them). */
const pageSeparator = "\f";

export function pagesToText(pages: readonly ExtractedPage[]): string {
    return pages.map((page) => page.text.replaceAll(pageSeparator, "\n")).join(pageSeparator);
}

export function pagesFromText(text: string): ExtractedPage[] {
    return text.split(pageSeparator).map((pageText, index) => ({page: index + 1, text: pageText}));
}

/** A document given to the model in whole, with its name and, when it has more than one, its page numbers. */
export function wholeDocumentBlock(name: string, pages: readonly ExtractedPage[]): string {
    const body = pages.length === 1 ? pages[0]!.text : pages.map((page) => `[page ${page.page}]\n${page.text}`).join("\n");
    return `<document name="${name}">\n${body}\n</document>`;
}

/** Retrieved passages, each labelled with its document and page (and lines) so a reply can cite them. */
export function passagesBlock(passages: readonly RetrievedPassage[]): string {
    return [
        "<passages from the attached documents>",
        ...passages.map((passage) => `[${passage.name}, page ${passage.page}, lines ${passage.startLine}-${passage.endLine}]\n${passage.text}`),
        "</passages>"
    ].join("\n");
}

/** The user turn as the model is given it: documents first, then what the user typed. */
export function userTurnWithDocuments(text: string, blocks: readonly string[]): string {
    return [...blocks, text].join("\n\n");
}

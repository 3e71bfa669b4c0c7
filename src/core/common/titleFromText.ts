export type TitleFromTextOptions = {
    /** Longest title, in user-perceived characters (grapheme clusters), the ellipsis included. Defaults to `60`. */
    maxGraphemes?: number,
    /** Used when the text has no visible line. Defaults to `"New conversation"`. */
    fallback?: string
};

export const defaultTitleMaxGraphemes = 60;
export const defaultConversationTitle = "New conversation";
const ellipsis = "…";
const printableAscii = /^[\x20-\x7e]*$/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const loneSurrogate = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]";

/**
 * A conversation's automatic title from its first message: the first line with text, spaces
 * collapsed, cut to `maxGraphemes` characters as the user sees them (`Intl.Segmenter`
 * graphemes), at a word when one ends in the second half, then "…". A cut never splits an
 * emoji, a flag, a ZWJ sequence or a letter from its combining marks, so the title is always
 * well-formed Unicode (a lone surrogate would be stored as invalid UTF-8).
 */
export function titleFromText(text: string, {maxGraphemes = defaultTitleMaxGraphemes, fallback = defaultConversationTitle}: TitleFromTextOptions = {}): string {
    const line = toWellFormed(text).split(/\r?\n/).map((candidate) => candidate.replace(/\s+/g, " ").trim()).find((candidate) => candidate !== "");
    if (line == null)
        return fallback;

    // In printable ASCII each character is a grapheme of its own: no need to start ICU's segmenter (about 5 ms of CPU, once a process).
    const graphemes = printableAscii.test(line) ? [...line] : [...new Intl.Segmenter(undefined, {granularity: "grapheme"}).segment(line)].map((part) => part.segment);
    if (graphemes.length <= maxGraphemes)
        return line;

    const kept = graphemes.slice(0, Math.max(1, maxGraphemes - 1));
    const lastSpace = kept.lastIndexOf(" ");
    const cut = lastSpace >= kept.length / 2 ? kept.slice(0, lastSpace) : kept;
    return cut.join("").trimEnd() + ellipsis;
}

/** Replaces each lone surrogate with U+FFFD (what `String.prototype.toWellFormed` does, ES2024). */
export function toWellFormed(text: string): string {
    return text.replace(new RegExp(loneSurrogate, "g"), "\uFFFD");
}

/** True when the text has no lone surrogate, so that it encodes to valid UTF-8. */
export function isWellFormed(text: string): boolean {
    return !new RegExp(loneSurrogate).test(text);
}

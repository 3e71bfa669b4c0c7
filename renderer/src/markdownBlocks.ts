/**
 * Splits a reply's Markdown into top-level blocks that render exactly as the whole text does, so
 * that each can be rendered (and memoized) on its own: while a reply streams in, only its last
 * block changes with each token, and only that one is parsed again. Rendering the whole reply on
 * every token made a long reply cost the page about a second of CPU per second of streaming.
 *
 * A split is made only at a blank line outside a fenced code block whose next line starts a block
 * that cannot belong to the one before: it starts in the first column with neither a list marker
 * nor a table row's pipe (so it cannot continue a list item, a list or a table). Text that may hold
 * a link reference or footnote definition (which reach across blocks: any `]:`) or an HTML block
 * that may span blank lines (a comment, <pre>, <script>, <style>, <textarea>, a declaration, a
 * processing instruction or CDATA) is left whole.
 */
export function splitMarkdownBlocks(text: string): string[] {
    if (text.includes("]:") || spanningHtmlBlock.test(text))
        return [text];

    const lines = text.split("\n");
    const blocks: string[] = [];
    let start = 0;
    let fence: {marker: string, length: number} | null = null;
    for (let index = 0; index < lines.length; index++) {
        const line = lines[index]!;
        if (fence != null) {
            const closing = fenceLine.exec(line);
            if (closing != null && closing[1]![0] === fence.marker && closing[1]!.length >= fence.length && closing[2]!.trim() === "")
                fence = null;
            continue;
        }
        const opening = fenceLine.exec(line);
        if (opening != null && !(opening[1]![0] === "`" && opening[2]!.includes("`"))) {
            fence = {marker: opening[1]![0]!, length: opening[1]!.length};
            continue;
        }
        if (line.trim() !== "" || index + 1 >= lines.length)
            continue;
        const next = lines[index + 1]!;
        if (startsUnrelatedBlock.test(next) && !listMarker.test(next)) {
            // Blank lines alone before it are no block (they render as nothing, and would add a line break).
            const block = lines.slice(start, index);
            if (block.some((before) => before.trim() !== ""))
                blocks.push(block.join("\n"));
            start = index + 1;
        }
    }
    blocks.push(lines.slice(start).join("\n"));
    return blocks;
}

const spanningHtmlBlock = /<(?:!|\?|(?:pre|script|style|textarea)(?:[\s>]|$))/i;
const fenceLine = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** A line in the first column that is not blank and not a table row's continuation. */
const startsUnrelatedBlock = /^[^\s|]/;
const listMarker = /^(?:[-+*]|\d{1,9}[.)])(?:\s|$)/;

/**
 * Whether decoded text is HTML, source code, Markdown or plain text, from its content alone (a
 * heuristic over its first 2,000 lines; the file name is never consulted):
 * - html: it opens (after comments) with `<!doctype html`, `<html`, `<head` or `<body`;
 * - code: a `#!` first line, or at least 30% of its non-blank lines end with `;`, `{`, `}` or
 *   `):`, or start with a common declaration, import or control keyword;
 * - markdown: otherwise, at least two lines with Markdown marks (`# heading`, a fence, a
 *   `[link](url)`, a `- ` or `1. ` list item, a `> ` quote or a `|` table row);
 * - text: anything else.
 */
export function classifyText(text: string): "html" | "code" | "markdown" | "text" {
    if (/^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]/i.test(text.slice(0, 4096)))
        return "html";
    const lines = text.split("\n", 2000);
    if (lines[0]?.startsWith("#!") === true)
        return "code";
    const nonBlank = lines.map((line) => line.trim()).filter((line) => line !== "");
    if (nonBlank.length === 0)
        return "text";
    const codeLike = nonBlank.filter((line) => /(?:[;{}]|\):)$/.test(line) ||
        /^(?:import|export|from|package|using|#include|def|class|function|fn|func|pub|let|const|var|public|private|return|if|for|while)\b/.test(line)).length;
    if (codeLike >= nonBlank.length * 0.3)
        return "code";
    const markdownLike = nonBlank.filter((line) => /^#{1,6}\s\S|^```|^~~~|\[[^\]]+\]\([^)]+\)|^[-*+]\s\S|^\d+\.\s\S|^>\s|^\|.*\|$/.test(line)).length;
    return markdownLike >= 2 ? "markdown" : "text";
}

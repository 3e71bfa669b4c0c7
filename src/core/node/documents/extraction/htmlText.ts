import {Parser} from "htmlparser2";
import type {ExtractedPage} from "./types.js";

/** Elements whose content is never text a reader sees. */
const hiddenElements = new Set(["script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object", "canvas"]);
/** Elements that start a new line. */
const blockElements = new Set([
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "tfoot", "thead", "title", "tr", "ul"
]);

/**
 * The text a reader of an HTML page sees, as one page: the title, then the body with scripts,
 * styles and other hidden content left out, entities decoded, whitespace collapsed (`<pre>` keeps
 * its line breaks), a line per block element and table cells separated by tabs.
 */
export function htmlText(html: string): ExtractedPage[] {
    let title = "";
    let body = "";
    let hiddenDepth = 0;
    let inTitle = false;
    let preDepth = 0;
    const parser = new Parser({
        onopentag(tag) {
            if (tag === "title")
                inTitle = true;
            else if (hiddenElements.has(tag))
                hiddenDepth++;
            else if (tag === "pre")
                preDepth++;
            if (hiddenDepth === 0 && blockElements.has(tag))
                body += "\n";
            else if (hiddenDepth === 0 && (tag === "td" || tag === "th"))
                body += "\t";
        },
        onclosetag(tag) {
            if (tag === "title")
                inTitle = false;
            else if (hiddenElements.has(tag))
                hiddenDepth = Math.max(0, hiddenDepth - 1);
            else if (tag === "pre")
                preDepth = Math.max(0, preDepth - 1);
            if (hiddenDepth === 0 && blockElements.has(tag))
                body += "\n";
        },
        ontext(text) {
            if (inTitle)
                title += text;
            else if (hiddenDepth === 0)
                body += preDepth > 0 ? text.replace(/\n/g, "\u2028") : text.replace(/\s+/g, " ");
        }
    }, {decodeEntities: true, lowerCaseTags: true});
    parser.end(html);
    const lines = body.split("\n").map((line) => line.replace(/[^\S\u2028]+/g, (space) => space.includes("\t") ? "\t" : " ").trim().replace(/\u2028/g, "\n"));
    const text = [title.replace(/\s+/g, " ").trim(), ...lines].join("\n").replace(/\n{3,}/g, "\n\n").trim();
    return [{page: 1, text}];
}

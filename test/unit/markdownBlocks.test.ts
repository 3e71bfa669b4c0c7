import fc from "fast-check";
import {createElement} from "react";
import {renderToStaticMarkup} from "react-dom/server";
import {describe, expect, it} from "vitest";
import {Markdown, MarkdownBlock} from "../../renderer/src/components/Markdown.js";
import {splitMarkdownBlocks} from "../../renderer/src/markdownBlocks.js";
import {testSeed} from "../helpers/testSeed.js";

/** A reply as the chat shows it (block by block), and the same text rendered whole by react-markdown with the same plugins. */
const rendered = (text: string) => renderToStaticMarkup(createElement(Markdown, {text}));
const renderedWhole = (text: string) => `<div class="markdown">${renderToStaticMarkup(createElement(MarkdownBlock, {text}))}</div>`;

const samples: Record<string, string> = {
    paragraphs: "Once upon a time there was a fox.\n\nIt lived in a wood.\n\n\nThe end.",
    headings: "# Title\n\nSome text.\n\n## Part two\n\nMore text\n===\n\n---\n\nAfter a rule.",
    "a tight list, then a paragraph": "- one\n- two\n\nAfter the list.",
    "a loose list": "- one\n\n- two\n\n- three\n\nAfter.",
    "an ordered list with blank lines between items": "1. First\n\n2. Second\n\n10. Tenth\n\nDone.",
    "a list item with a second paragraph": "1. Step one\n\n   More about step one\n\n2. Step two\n\nEnd.",
    "a fence with blank lines inside": "Code:\n\n```ts\nconst a = 1;\n\nconst b = 2;\n\n# not a heading\n```\n\nAfter the code.",
    "a tilde fence and a longer backtick fence": "~~~\nx\n\n```\ny\n~~~\n\n````md\n```\ninner\n\n```\n````\n\nEnd.",
    "a fence not closed yet (streaming)": "Here:\n\n```python\ndef f():\n\n    return 1",
    "indented code": "Text.\n\n    indented code\n\n    more code\n\nText again.",
    "a table": "| a | b |\n|---|---|\n| 1 | 2 |\n\n| c |\n|---|\n| 3 |\n\nAfter.",
    "block quotes": "> quoted\n>\n> still quoted\n\n> another quote\n\nplain",
    "a reference link defined later": "See [the docs][docs].\n\nMore.\n\n[docs]: https://example.com",
    footnotes: "A claim[^1].\n\nMore.\n\n[^1]: The source.",
    "an HTML comment across a blank line": "Before\n\n<!-- a comment\n\nstill the comment -->\n\nAfter",
    "raw HTML blocks": "<div>\n\n*inside*\n\n</div>\n\n<pre>\n\nkept\n\n</pre>\n\nend",
    "task list and strikethrough": "- [ ] todo\n- [x] done\n\n~~gone~~ and **bold**\n\n* star item\n\n+ plus item",
    "CRLF line endings": "one\r\n\r\ntwo\r\n\r\n- three\r\n",
    empty: "",
    "blank lines only": "\n\n\n"
};

describe("a reply rendered block by block", () => {
    it("splits a story at its paragraphs; as a reply streams in, a block followed by another never changes again", () => {
        expect(splitMarkdownBlocks("One.\n\nTwo.\n\nThree")).toEqual(["One.", "Two.", "Three"]);
        const reply = "Once upon a time.\n\nThere was a fox.\n\nIt ran away.";
        let previous: string[] = [];
        for (let length = 1; length <= reply.length; length++) {
            const blocks = splitMarkdownBlocks(reply.slice(0, length));
            expect(blocks.slice(0, previous.length - 1), `after ${length} characters`).toEqual(previous.slice(0, -1));
            previous = blocks;
        }
        expect(previous).toHaveLength(3);
    });

    it("keeps a list item's second paragraph, a fence's blank lines and a text with definitions in one block", () => {
        expect(splitMarkdownBlocks("1. Step\n\n   more\n\n2. Next")).toHaveLength(1);
        expect(splitMarkdownBlocks("```\na\n\nb\n```\n\nafter")).toEqual(["```\na\n\nb\n```", "after"]);
        expect(splitMarkdownBlocks("[a][x]\n\ntext\n\n[x]: https://example.com")).toHaveLength(1);
    });

    for (const [name, text] of Object.entries(samples))
        it(`renders exactly as the whole text does: ${name}`, () => {
            expect(rendered(text)).toBe(renderedWhole(text));
        });

    it("renders exactly as the whole text does, for generated Markdown", () => {
        // Few kinds of line, the list markers repeated: a split is wrong mostly between blocks of the same kind (two items of one list).
        const line = fc.oneof(
            {weight: 6, arbitrary: fc.constantFrom("", "", " ", "- item", "- item", "1. item", "2. item", "  continued", "   more", "Plain words here.",
                "```", "```js", "~~~", "    indented code", "> quote", "| a | b |", "|---|---|")},
            {weight: 1, arbitrary: fc.constantFrom("# Heading", "===", "---", ">", "* item", "2) item", "\ttabbed", "````", "a | b", "- [ ] task", "~~struck~~", "***")},
            {weight: 1, arbitrary: fc.string({unit: fc.constantFrom("a", " ", "-", "*", "`", "~", "#", ">", "|", "1", ".", ")", "_"), maxLength: 8})}
        );
        fc.assert(fc.property(fc.array(line, {maxLength: 16}), (lines) => {
            const text = lines.join("\n");
            expect(rendered(text)).toBe(renderedWhole(text));
        }), {numRuns: 120, seed: testSeed("markdown blocks")});
    });
});

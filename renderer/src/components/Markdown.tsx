import {Fragment, memo, useRef, useState, type ReactNode} from "react";
import ReactMarkdown, {type Components} from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import {copyText} from "../copyText.js";
import {splitMarkdownBlocks} from "../markdownBlocks.js";

const components: Components = {
    // Links leave the app: a new window, no referrer; the desktop shell validates them before opening.
    a: ({href, children}) => <a href={href} target="_blank" rel="noopener noreferrer">{children}</a>,
    img: ({alt}) => <span className="md-image-omitted">[image: {alt ?? "no description"}]</span>,
    pre: ({children}) => <CodeBlock>{children}</CodeBlock>,
    // A wide table scrolls inside the reply instead of pushing the layout wider.
    table: ({children}) => <div className="table-scroll" tabIndex={0} role="region" aria-label="Table"><table>{children}</table></div>
};

/** A code block with its own Copy button (the code as written, without the highlighting). */
function CodeBlock({children}: {children?: ReactNode}) {
    const pre = useRef<HTMLPreElement>(null);
    const [copied, setCopied] = useState(false);
    return (
        <div className="code-block">
            <button type="button" className="text-button code-copy" aria-label={copied ? "Code copied" : "Copy code"} onClick={() => {
                void copyText(pre.current?.innerText ?? "").then((ok) => {
                    setCopied(ok);
                    if (ok)
                        setTimeout(() => setCopied(false), 1500);
                });
            }}>{copied ? "Copied" : "Copy code"}</button>
            <pre ref={pre} tabIndex={0}>{children}</pre>
        </div>
    );
}

const remarkPlugins = [remarkGfm];
// react-markdown attaches its plugins again on every render, and rehype-highlight, once attached, builds lowlight with its
// 37 grammars: most of a streamed reply's CPU in the page. Attached once here, its transformer (which keeps nothing between
// trees) serves every render.
const highlightCode = rehypeHighlight({detect: true});
const rehypePlugins = [() => highlightCode];

/**
 * A reply rendered as Markdown with GitHub's tables, task lists and strikethrough (raw HTML is never rendered) with highlighted
 * code blocks, each with Copy. Rendered block by block (`splitMarkdownBlocks`), each block memoized on its text: as a reply
 * streams in, only its last block is parsed again, and the replies above it not at all.
 */
export const Markdown = memo(function Markdown({text}: {text: string}) {
    return (
        <div className="markdown">
            {splitMarkdownBlocks(text).map((block, index) => (
                // The line break react-markdown puts between blocks, so the text is the same as the whole rendered at once.
                <Fragment key={index}>{index > 0 && "\n"}<MarkdownBlock text={block} /></Fragment>
            ))}
        </div>
    );
});

/** One block of Markdown, or a whole text, memoized on its text. */
export const MarkdownBlock = memo(function MarkdownBlock({text}: {text: string}) {
    return <ReactMarkdown remarkPlugins={remarkPlugins} rehypePlugins={rehypePlugins} components={components}>{text}</ReactMarkdown>;
});

import {useRef, useState, type ReactNode} from "react";
import ReactMarkdown, {type Components} from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import {copyText} from "../copyText.js";

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

/** A reply rendered as Markdown with GitHub's tables, task lists and strikethrough (raw HTML is never rendered) with highlighted code blocks, each with Copy. */
export function Markdown({text}: {text: string}) {
    return (
        <div className="markdown">
            <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[[rehypeHighlight, {detect: true, ignoreMissing: true}]]} components={components}>
                {text}
            </ReactMarkdown>
        </div>
    );
}

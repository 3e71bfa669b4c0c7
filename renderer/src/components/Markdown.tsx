import ReactMarkdown, {type Components} from "react-markdown";
import rehypeHighlight from "rehype-highlight";

const components: Components = {
    // Links leave the app: a new window, no referrer; the desktop shell validates them before opening.
    a: ({href, children}) => <a href={href} target="_blank" rel="noopener noreferrer">{children}</a>,
    img: ({alt}) => <span className="md-image-omitted">[image: {alt ?? "no description"}]</span>
};

/** A reply rendered as Markdown (raw HTML is never rendered) with highlighted code blocks. */
export function Markdown({text}: {text: string}) {
    return (
        <div className="markdown">
            <ReactMarkdown rehypePlugins={[[rehypeHighlight, {detect: true, ignoreMissing: true}]]} components={components}>
                {text}
            </ReactMarkdown>
        </div>
    );
}

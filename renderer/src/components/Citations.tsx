import {useCallback, useState} from "react";
import type {Citation, CitedDocument, CitedPassage} from "../../../src/core/common/api/documentSchemas.js";
import {describeError} from "../describeError.js";
import {useModalDialog} from "../hooks/useModalDialog.js";

/** What a citation opens: the passage with its lines, or the document given whole, page by page. */
export type CitedText = {kind: "passage", passage: CitedPassage} | {kind: "document", document: CitedDocument};

/** Reads a citation's text from the open conversation's stored documents. */
export type OpenCitation = (citation: Citation) => Promise<CitedText>;

/** How a citation is named: its document and page (a passage), or its document given whole. */
export function citationLabel(citation: Citation): string {
    return citation.kind === "passage"
        ? `${citation.name}, page ${citation.page}`
        : `${citation.name}, whole (${citation.pages} ${citation.pages === 1 ? "page" : "pages"})`;
}

/**
 * Under a reply (#23 item 4): the passages and documents it was given, each a button that opens
 * its text in a dialog, read from the conversation's own stored chunks.
 */
export function Citations({citations, onOpen}: {citations: Citation[], onOpen: OpenCitation}) {
    const [open, setOpen] = useState<{citation: Citation, text: CitedText | null, problem: string | null} | null>(null);
    const close = useCallback(() => setOpen(null), []);
    if (citations.length === 0)
        return null;

    const show = async (citation: Citation) => {
        setOpen({citation, text: null, problem: null});
        try {
            const text = await onOpen(citation);
            setOpen((current) => current?.citation === citation ? {citation, text, problem: null} : current);
        } catch (error) {
            setOpen((current) => current?.citation === citation ? {citation, text: null, problem: describeError(error).detail} : current);
        }
    };

    return (
        <nav className="citations" aria-label="Sources">
            <span className="citations-title">Sources</span>
            <ul>
                {citations.map((citation, index) => (
                    <li key={citation.kind === "passage" ? `p${citation.chunkId}` : `d${citation.attachmentId}-${index}`}>
                        <button type="button" className="citation" onClick={() => void show(citation)}
                            title={citation.kind === "passage" ? `Lines ${citation.startLine}–${citation.endLine}` : "Given whole"}>
                            {citationLabel(citation)}
                        </button>
                    </li>
                ))}
            </ul>
            {open != null && <CitationDialog citation={open.citation} text={open.text} problem={open.problem} onClose={close} />}
        </nav>
    );
}

/** The cited text with its page and line numbers. Focus starts on Close; Escape closes; Tab stays in the dialog. */
function CitationDialog({citation, text, problem, onClose}: {citation: Citation, text: CitedText | null, problem: string | null, onClose: () => void}) {
    const {dialog, initialFocus: closeButton, onKeyDown} = useModalDialog<HTMLButtonElement>(onClose);
    return (
        <div className="dialog-backdrop" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
            <div ref={dialog} className="dialog citation-dialog" role="dialog" aria-modal="true" aria-labelledby="citation-title"
                aria-describedby="citation-where" onKeyDown={onKeyDown}>
                <header className="dialog-header">
                    <h2 id="citation-title">{citationLabel(citation)}</h2>
                </header>
                <p id="citation-where" className="muted small">
                    {citation.kind === "passage"
                        ? `Page ${citation.page}, lines ${citation.startLine}–${citation.endLine}: the passage the reply was given.`
                        : "The whole document, as the reply was given it."}
                </p>
                {problem != null
                    ? <p role="alert" className="fault-text">Could not read this source: {problem}</p>
                    : text == null
                        ? <p role="status" className="muted">Reading…</p>
                        : text.kind === "passage"
                            ? <NumberedLines label={`Page ${text.passage.page}`} firstLine={text.passage.startLine} text={text.passage.text} />
                            : text.document.pages.map((page) => <NumberedLines key={page.page} label={`Page ${page.page}`} firstLine={1} text={page.text} />)}
                <div className="dialog-actions">
                    <button ref={closeButton} type="button" className="button button-primary" onClick={onClose}>Close</button>
                </div>
            </div>
        </div>
    );
}

function NumberedLines({label, firstLine, text}: {label: string, firstLine: number, text: string}) {
    return (
        <section className="cited-text" aria-label={label}>
            <h3 className="small">{label}</h3>
            <ol start={firstLine} className="cited-lines">
                {text.split("\n").map((line, index) => <li key={index} value={firstLine + index}>{line === "" ? "\u00a0" : line}</li>)}
            </ol>
        </section>
    );
}

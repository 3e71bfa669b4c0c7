import {useCallback} from "react";
import {formatBytes} from "../format.js";
import type {CloudDocument} from "../hooks/useCloudDocumentsReview.js";
import {useModalDialog} from "../hooks/useModalDialog.js";

/**
 * Asked before a cloud turn sends documents (#23): names each with its size. "Send to the cloud"
 * sends the turn with them; Cancel sends nothing and keeps the text and the attachments in the
 * composer. Focus starts on Cancel; Escape cancels; Tab stays in the dialog.
 */
export function CloudDocumentsDialog({documents, onAnswer}: {documents: CloudDocument[], onAnswer: (send: boolean) => void}) {
    const {dialog, initialFocus: cancel, onKeyDown} = useModalDialog<HTMLButtonElement>(useCallback(() => onAnswer(false), [onAnswer]));

    const what = documents.length === 1 ? "this document" : `these ${documents.length} documents`;
    return (
        <div className="dialog-backdrop" onMouseDown={(event) => event.target === event.currentTarget && event.preventDefault()}>
            <div ref={dialog} className="dialog cloud-documents-dialog" role="dialog" aria-modal="true" aria-labelledby="cloud-documents-title"
                aria-describedby="cloud-documents-summary" onKeyDown={onKeyDown}>
                <header className="dialog-header">
                    <h2 id="cloud-documents-title">Send documents to the cloud?</h2>
                </header>
                <p id="cloud-documents-summary">This turn goes to the cloud and would send {what} with it. Nothing has left this machine yet.</p>
                <ul className="cloud-documents" aria-label="Documents to send">
                    {documents.map((document, index) => (
                        <li key={index}><strong>{document.name}</strong> <span>{formatBytes(document.bytes)}</span></li>
                    ))}
                </ul>
                <div className="dialog-actions">
                    <button type="button" className="button button-cloud" onClick={() => onAnswer(true)}>Send to the cloud</button>
                    <button ref={cancel} type="button" className="button button-primary" onClick={() => onAnswer(false)}>Cancel</button>
                </div>
            </div>
        </div>
    );
}

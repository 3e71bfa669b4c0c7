import {formatBytes, formatCount} from "../format.js";

/** What a chip shows of a document: known once the core has read it (`pages`) or stored it (`tokens`). */
export type AttachmentChipData = {key: string, name: string, bytes: number, pages?: number, tokens?: number, reading?: boolean};

/**
 * Documents as chips: name, pages, size, tokens when known. In the composer each has a remove
 * button ("Remove <name>") and a chip being uploaded and read says so; under a sent message they
 * are the documents it brought.
 */
export function AttachmentChips({attachments, label, onRemove}: {
    attachments: AttachmentChipData[], label: string, onRemove?: (key: string) => void
}) {
    if (attachments.length === 0)
        return null;
    return (
        <ul className="attachment-chips" aria-label={label}>
            {attachments.map((attachment) => (
                <li key={attachment.key} className="attachment-chip" aria-busy={attachment.reading === true}>
                    <PaperclipIcon />
                    <span className="attachment-name">{attachment.name}</span>
                    <span className="attachment-facts">
                        {attachment.reading === true
                            ? "reading…"
                            : [
                                attachment.pages != null ? `${formatCount(attachment.pages)} ${attachment.pages === 1 ? "page" : "pages"}` : null,
                                formatBytes(attachment.bytes),
                                attachment.tokens != null ? `${formatCount(attachment.tokens)} tokens` : null
                            ].filter(Boolean).join(" · ")}
                    </span>
                    {onRemove != null && (
                        <button type="button" className="attachment-remove" aria-label={`Remove ${attachment.name}`} title={`Remove ${attachment.name}`}
                            onClick={() => onRemove(attachment.key)}>×</button>
                    )}
                </li>
            ))}
        </ul>
    );
}

export function PaperclipIcon() {
    return <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round"><path d="M13 7.5l-5.3 5.3a3.2 3.2 0 01-4.5-4.5l5.6-5.6a2.1 2.1 0 013 3l-5.6 5.6a1 1 0 01-1.5-1.5L9.9 4.6" /></svg>;
}

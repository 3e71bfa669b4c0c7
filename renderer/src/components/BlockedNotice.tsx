import type {Message} from "../../../src/core/common/types.js";

const verdictLabels: Record<string, string> = {
    "foreign-canary": "Another tenant's data",
    "cross-request": "Data of another of your requests",
    "fingerprint": "Text of another of your conversations"
};

/**
 * What stands in place of a blocked cloud reply: that it was blocked and why. There is no
 * text to show: a blocked reply is stored empty, with only its verdict.
 */
export function BlockedNotice({verdict, onRetryLocally}: {verdict: Message["verdict"], onRetryLocally: (() => void) | null}) {
    return (
        <div className="blocked-notice">
            <p className="blocked-title">This cloud reply was blocked by the canary checks.</p>
            <p>It was discarded and is not stored; nothing of it was added to this conversation.</p>
            {verdict != null && (
                <p className="blocked-detail">
                    <strong>{verdictLabels[verdict.kind] ?? verdict.kind}:</strong> {verdict.detail}
                </p>
            )}
            {onRetryLocally != null && (
                <button type="button" className="button" onClick={onRetryLocally}>Retry locally</button>
            )}
        </div>
    );
}

import {useCallback} from "react";
import type {ModelStatus} from "../../../src/core/common/api/index.js";
import type {SecretFinding} from "../../../src/core/common/secretScan/types.js";
import type {SecretsChoice} from "../hooks/useSecretReview.js";
import {useModalDialog} from "../hooks/useModalDialog.js";

/**
 * A cloud turn held back because it would send secrets: what was found (kind, place, a masked
 * preview, never the value), and the three ways on: send it with each value replaced by a
 * placeholder (put back in the reply shown), answer it with the local model, or cancel (the text
 * goes back to the message box). Focus starts on Cancel, the choice that does nothing; Escape
 * cancels; Tab stays in the dialog.
 */
export function SecretsFoundDialog({findings, localUnavailable, onChoose}: {
    findings: SecretFinding[],
    /** Why the turn cannot be answered locally (no model loaded…), or null when it can. */
    localUnavailable: string | null,
    onChoose: (choice: SecretsChoice) => void
}) {
    const {dialog, initialFocus: cancel, onKeyDown} = useModalDialog<HTMLButtonElement>(useCallback(() => onChoose("cancel"), [onChoose]));

    const count = findings.length === 1 ? "a likely secret" : `${findings.length} likely secrets`;
    const example = `[${findings[0]!.kind} 1]`;
    return (
        // A click beside the dialog leaves the focus in it: the choice is made with its buttons.
        <div className="dialog-backdrop" onMouseDown={(event) => event.target === event.currentTarget && event.preventDefault()}>
            <div ref={dialog} className="dialog secrets-dialog" role="dialog" aria-modal="true" aria-labelledby="secrets-title"
                aria-describedby="secrets-summary" onKeyDown={onKeyDown}>
                <header className="dialog-header">
                    <h2 id="secrets-title">Not sent: secrets found</h2>
                </header>
                <p id="secrets-summary">This cloud request holds {count}. Nothing has left this machine.</p>
                <table className="secrets-found" aria-label="Secrets found">
                    <thead><tr><th scope="col">What</th><th scope="col">Where</th><th scope="col">Looks like</th></tr></thead>
                    <tbody>
                        {findings.map((finding, index) => (
                            <tr key={index}>
                                <td>{capitalized(finding.kind)}</td>
                                <td>{placeOf(finding)}, line {finding.line}</td>
                                <td><code>{finding.preview}</code></td>
                            </tr>
                        ))}
                    </tbody>
                </table>
                <ul className="secrets-choices">
                    <li>
                        <button type="button" className="button button-cloud" aria-describedby="secrets-redact-hint" onClick={() => onChoose("redact")}>
                            Send with these redacted
                        </button>
                        <small id="secrets-redact-hint">Each is sent as a placeholder such as <code>{example}</code>; the value is put back in the reply you see.</small>
                    </li>
                    <li>
                        <button type="button" className="button" aria-describedby="secrets-local-hint" disabled={localUnavailable != null}
                            onClick={() => onChoose("local")}>Answer locally instead</button>
                        <small id="secrets-local-hint">{localUnavailable ?? "The local model answers; nothing goes to the cloud."}</small>
                    </li>
                    <li>
                        <button ref={cancel} type="button" className="button button-primary" aria-describedby="secrets-cancel-hint"
                            onClick={() => onChoose("cancel")}>Cancel</button>
                        <small id="secrets-cancel-hint">Nothing is sent; your text goes back to the message box.</small>
                    </li>
                </ul>
            </div>
        </div>
    );
}

/** Why "Answer locally instead" cannot be chosen with the model in this state, or null when it can. */
export function localAnswerUnavailable(model: ModelStatus | null): string | null {
    if (model?.state === "ready")
        return null;
    return model?.state === "loading"
        ? "The local model is still loading: cancel, and send again once it is ready."
        : "No local model is loaded: load one in Settings or Models to answer here.";
}

/** "Your message", "The system prompt", "Earlier message 2": where in the request a secret stands. */
function placeOf(finding: SecretFinding) {
    if (finding.where === "the prompt")
        return "Your message";
    if (finding.role === "system")
        return "The system prompt";
    const earlier = /^history message (\d+)$/.exec(finding.where);
    return earlier != null ? `Earlier message ${earlier[1]}` : capitalized(finding.where);
}

function capitalized(text: string) {
    return text.charAt(0).toUpperCase() + text.slice(1);
}

import {useEffect, useState} from "react";
import type {ApiInput, AppSettings} from "../../../src/core/common/api/index.js";
import {passphraseMinimumLength} from "../../../src/core/common/api/limits.js";
import {describeError} from "../describeError.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";

type Action = "set" | "change" | "remove";

/**
 * The app lock in Settings: set a passphrase (typed twice), change it (current, new twice), remove
 * it (current), lock now, and the idle time. The passphrases live only in these fields and the one
 * call; the fields are emptied once it answers.
 */
export function PassphraseSettings({client, settings, onSave}: {
    client: AppCoreClient, settings: AppSettings, onSave: (changes: ApiInput<"settings.set">) => Promise<unknown>
}) {
    const [passphraseSet, setPassphraseSet] = useState<boolean | null>(null);
    const [action, setAction] = useState<Action | null>(null);
    const [current, setCurrent] = useState("");
    const [next, setNext] = useState("");
    const [nextAgain, setNextAgain] = useState("");
    const [busy, setBusy] = useState(false);
    const [message, setMessage] = useState<{text: string, error: boolean} | null>(null);
    const [minutes, setMinutes] = useState(String(settings.lockAfterMinutes));

    useEffect(() => {
        void client.call("app.lockState", {}).then((state) => setPassphraseSet(state.passphraseSet), () => undefined);
    }, [client]);

    const reset = () => {
        setAction(null);
        setCurrent("");
        setNext("");
        setNextAgain("");
    };
    const problem = action !== "remove" && next !== nextAgain ? "The two new passphrases differ."
        : action !== "remove" && next !== "" && [...next].length < passphraseMinimumLength ? `A passphrase has at least ${passphraseMinimumLength} characters.`
            : null;
    const ready = problem == null && (action === "set" || current !== "") && (action === "remove" || next !== "");

    const submit = async () => {
        setBusy(true);
        setMessage(null);
        try {
            const result = await client.call("app.setPassphrase", {current: action === "set" ? null : current, next: action === "remove" ? null : next});
            setPassphraseSet(result.passphraseSet);
            setMessage({text: action === "remove" ? "The passphrase is removed: the database stays encrypted, with a key kept for you."
                : "The passphrase is set: it is asked for when Cleanroom opens and after the idle time.", error: false});
            reset();
        } catch (failure) {
            setMessage({text: describeError(failure).detail, error: true});
        } finally {
            setBusy(false);
        }
    };

    return (
        <fieldset>
            <legend>Passphrase and app lock</legend>
            <p className="field-hint">{passphraseSet === true
                ? "A passphrase protects your conversations: Cleanroom opens locked and locks itself when idle."
                : "With a passphrase, Cleanroom opens locked and locks itself when idle; the key is derived from it and never stored."}</p>
            {action == null && passphraseSet != null && (
                <div className="button-row">
                    {passphraseSet
                        ? <>
                            <button type="button" className="button" onClick={() => setAction("change")}>Change passphrase…</button>
                            <button type="button" className="button" onClick={() => setAction("remove")}>Remove passphrase…</button>
                            <button type="button" className="button" onClick={() => void client.call("app.lock", {}).catch(
                                (failure: unknown) => setMessage({text: describeError(failure).detail, error: true}))}>Lock now</button>
                        </>
                        : <button type="button" className="button" onClick={() => setAction("set")}>Set a passphrase…</button>}
                </div>
            )}
            {action != null && (
                <form onSubmit={(event) => {
                    event.preventDefault();
                    if (ready)
                        void submit();
                }}>
                    {action !== "set" && <PassphraseField label="Current passphrase" value={current} onChange={setCurrent} autoComplete="current-password" />}
                    {action !== "remove" && <>
                        <PassphraseField label="New passphrase" value={next} onChange={setNext} autoComplete="new-password" />
                        <PassphraseField label="New passphrase again" value={nextAgain} onChange={setNextAgain} autoComplete="new-password" />
                    </>}
                    {problem != null && nextAgain !== "" && <p className="field-hint" role="status">{problem}</p>}
                    <p className="field-hint">Every session is ended (scrubbed) and the database re-encrypted under the new key.</p>
                    <div className="button-row">
                        <button type="button" className="button" onClick={reset}>Cancel</button>
                        <button type="submit" className="button button-primary" disabled={!ready || busy}>
                            {busy ? "Re-encrypting…" : action === "set" ? "Set passphrase" : action === "change" ? "Change passphrase" : "Remove passphrase"}
                        </button>
                    </div>
                </form>
            )}
            {message != null && <p className={message.error ? "banner" : "field-hint"} role={message.error ? "alert" : "status"}>{message.text}</p>}
            <label className="field">
                <span>Lock after (minutes idle, 0 never)</span>
                <input type="number" min={0} max={10080} inputMode="numeric" value={minutes} onChange={(event) => setMinutes(event.target.value)}
                    onBlur={() => {
                        const value = Number(minutes);
                        if (Number.isInteger(value) && value >= 0 && value <= 10080 && value !== settings.lockAfterMinutes)
                            void onSave({lockAfterMinutes: value});
                    }} />
            </label>
        </fieldset>
    );
}

function PassphraseField({label, value, onChange, autoComplete}: {label: string, value: string, onChange: (value: string) => void, autoComplete: string}) {
    return (
        <label className="field">
            <span>{label}</span>
            <input type="password" value={value} autoComplete={autoComplete} spellCheck={false} onChange={(event) => onChange(event.target.value)} />
        </label>
    );
}

import {useState} from "react";
import type {ApiInput, AppSettings} from "../../../src/core/common/api/index.js";
import {maxNeverSendPhraseLength} from "../../../src/core/common/api/limits.js";
import {addNeverSendPhrase, removeNeverSendPhrase} from "../../../src/core/common/secretScan/neverSendList.js";
import {describeError} from "../describeError.js";

/**
 * Settings → "Never send these": words and phrases (a project's code name, a client's name) that
 * no cloud request may carry. Each add or remove is saved at once (`settings.set {cloudNeverSend}`).
 */
export function NeverSendSettings({settings, onSave}: {
    settings: AppSettings, onSave: (changes: ApiInput<"settings.set">) => Promise<unknown>
}) {
    const [phrase, setPhrase] = useState("");
    const [problem, setProblem] = useState<string | null>(null);
    const list = settings.cloud.neverSend;

    const add = async () => {
        setProblem(null);
        try {
            const next = addNeverSendPhrase(list, phrase);
            if (!next.added) {
                setProblem("That phrase is in the list already.");
                return;
            }
            // onSave shows its own error and gives nothing back: the phrase then stays in the field.
            if (await onSave({cloudNeverSend: next.list}) != null)
                setPhrase("");
        } catch (error) {
            setProblem(describeError(error).detail);
        }
    };
    return (
        <fieldset>
            <legend>Never send these</legend>
            <p className="field-hint" id="never-send-hint">A cloud request that contains one of these words or phrases (in any case) is stopped before it is sent.</p>
            <form className="field-row never-send-add" onSubmit={(event) => {
                event.preventDefault();
                void add();
            }}>
                <input value={phrase} onChange={(event) => setPhrase(event.target.value)} aria-label="Word or phrase never to send"
                    aria-describedby="never-send-hint" placeholder="a code name, a client, a word" maxLength={maxNeverSendPhraseLength}
                    autoComplete="off" spellCheck={false} />
                <button type="submit" className="button" disabled={phrase.trim() === ""}>Add</button>
            </form>
            {problem != null && <p className="inline-error" role="alert">{problem}</p>}
            {list.length === 0
                ? <p className="small muted">Nothing yet.</p>
                : (
                    <ul className="never-send-list" aria-label="Never send list">
                        {list.map((entry) => (
                            <li key={entry}>
                                <span>{entry}</span>
                                <button type="button" className="button button-small" aria-label={`Remove “${entry}”`}
                                    onClick={() => void onSave({cloudNeverSend: removeNeverSendPhrase(list, entry).list})}>Remove</button>
                            </li>
                        ))}
                    </ul>
                )}
        </fieldset>
    );
}

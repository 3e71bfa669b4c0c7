import {useState, type KeyboardEvent} from "react";
import {maxMessageTextLength} from "../../../src/core/common/api/index.js";
import type {RouteRequest} from "../../../src/core/common/types.js";

const formatCount = (count: number) => count.toLocaleString("en-US");

/**
 * The message box: Enter sends, Shift+Enter adds a line; Stop sits beside Send while a reply
 * streams. With `canSendToCloud`, "Send to cloud" sends the turn to the cloud on purpose. A
 * message longer than the contract allows is never sent: the limit is shown and the draft stays.
 */
export function Composer({disabled, generating, canSendToCloud, onSend, onStop, placeholder}: {
    disabled: boolean, generating: boolean, canSendToCloud: boolean,
    onSend: (text: string, route: RouteRequest) => Promise<boolean>, onStop: () => void, placeholder: string
}) {
    const [text, setText] = useState("");
    const overBy = text.length - maxMessageTextLength;
    const canSend = !disabled && !generating && overBy <= 0 && text.trim() !== "";

    const submit = async (route: RouteRequest) => {
        if (!canSend)
            return;
        const sent = text;
        setText("");
        if (!await onSend(sent, route))
            setText(sent);
    };
    const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
        if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void submit("auto");
        }
    };

    return (
        <form className="composer" onSubmit={(event) => {
            event.preventDefault();
            void submit("auto");
        }}>
            <div className="composer-input">
                <textarea aria-label="Message" placeholder={placeholder} value={text} rows={Math.min(8, Math.max(1, text.split("\n").length))}
                    disabled={disabled} onChange={(event) => setText(event.target.value)} onKeyDown={onKeyDown}
                    aria-invalid={overBy > 0} aria-describedby={overBy > 0 ? "composer-too-long" : undefined} />
                {overBy > 0 && (
                    <p id="composer-too-long" className="warning-text" role="alert">
                        This message is {formatCount(text.length)} characters; a message can be at most {formatCount(maxMessageTextLength)}.
                        Shorten it by {formatCount(overBy)} to send it.
                    </p>
                )}
            </div>
            <div className="composer-actions">
                {generating && <button type="button" className="button button-danger" onClick={onStop}>Stop</button>}
                <button type="submit" className="button button-primary" disabled={!canSend}>Send</button>
                {canSendToCloud && (
                    <button type="button" className="button button-cloud" disabled={!canSend} title="Send this turn to the cloud, canary-checked"
                        onClick={() => void submit("cloud")}>Send to cloud</button>
                )}
            </div>
        </form>
    );
}

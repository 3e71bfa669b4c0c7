import {useState, type KeyboardEvent} from "react";

/** The message box: Enter sends, Shift+Enter adds a line; Stop replaces nothing, it sits beside Send while a reply streams. */
export function Composer({disabled, generating, onSend, onStop, placeholder}: {
    disabled: boolean, generating: boolean, onSend: (text: string) => Promise<boolean>, onStop: () => void, placeholder: string
}) {
    const [text, setText] = useState("");
    const canSend = !disabled && !generating && text.trim() !== "";

    const submit = async () => {
        if (!canSend)
            return;
        const sent = text;
        setText("");
        if (!await onSend(sent))
            setText(sent);
    };
    const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
        if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void submit();
        }
    };

    return (
        <form className="composer" onSubmit={(event) => {
            event.preventDefault();
            void submit();
        }}>
            <textarea aria-label="Message" placeholder={placeholder} value={text} rows={Math.min(8, Math.max(1, text.split("\n").length))}
                disabled={disabled} onChange={(event) => setText(event.target.value)} onKeyDown={onKeyDown} />
            <div className="composer-actions">
                {generating && <button type="button" className="button button-danger" onClick={onStop}>Stop</button>}
                <button type="submit" className="button button-primary" disabled={!canSend}>Send</button>
            </div>
        </form>
    );
}

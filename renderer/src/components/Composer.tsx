import {useEffect, useRef, useState, type KeyboardEvent} from "react";
import {maxMessageTextLength} from "../../../src/core/common/api/index.js";
import type {RouteRequest} from "../../../src/core/common/types.js";
import {DraftSaver} from "../DraftSaver.js";

const formatCount = (count: number) => count.toLocaleString("en-US");

/** A prompt being edited: Enter resends it as a new version (the old exchange is kept). */
export type EditingMessage = {messageId: number, text: string};

/**
 * The message box: Enter sends, Shift+Enter adds a line, Escape stops a reply (or cancels an edit),
 * Up in an empty box edits the last prompt. Stop sits beside Send while a reply streams. With
 * `canSendToCloud`, "Send to cloud" sends the turn to the cloud on purpose. What is typed is the
 * conversation's draft, kept in the core as it changes: it survives a refused turn, a reload and a
 * core restart. A message longer than the contract allows is never sent: the limit is shown.
 */
export function Composer({conversationId, serverDraft, editing, disabled, generating, canSendToCloud, placeholder,
    onSend, onResend, onStop, onEditLast, onCancelEdit, onSaveDraft}: {
    conversationId: string, serverDraft: string | null, editing: EditingMessage | null,
    disabled: boolean, generating: boolean, canSendToCloud: boolean, placeholder: string,
    onSend: (text: string, route: RouteRequest) => Promise<boolean>,
    onResend: (messageId: number, text: string, route: RouteRequest) => Promise<boolean>,
    onStop: () => void, onEditLast: () => boolean, onCancelEdit: () => void,
    onSaveDraft: (conversationId: string, text: string) => Promise<void>
}) {
    const [text, setText] = useState(serverDraft ?? "");
    const input = useRef<HTMLTextAreaElement>(null);
    const saveDraftNow = useRef(onSaveDraft);
    saveDraftNow.current = onSaveDraft;
    const drafts = useRef<DraftSaver | null>(null);
    drafts.current ??= new DraftSaver((id, value) => void saveDraftNow.current(id, value));
    const textBeforeEdit = useRef("");
    const overBy = text.length - maxMessageTextLength;
    const canSend = !disabled && !generating && overBy <= 0 && text.trim() !== "";

    const change = (value: string) => {
        setText(value);
        drafts.current?.changed(conversationId, value, {editing: editing != null});
    };

    // The core gives a prompt back (a refused, failed or blocked turn): it returns to an empty composer.
    useEffect(() => {
        if (serverDraft != null && serverDraft !== "")
            setText((current) => current.trim() === "" ? serverDraft : current);
    }, [serverDraft]);
    // An edit starts: its text comes into the box, what was there is put back when the edit is cancelled.
    useEffect(() => {
        if (editing == null)
            return;
        setText((current) => {
            textBeforeEdit.current = current;
            return editing.text;
        });
        input.current?.focus();
    }, [editing]);
    // A switch of conversation, a reload or a closed window saves what is pending at once.
    useEffect(() => {
        const flush = () => drafts.current?.flush();
        window.addEventListener("pagehide", flush);
        return () => {
            window.removeEventListener("pagehide", flush);
            flush();
        };
    }, [conversationId, onSaveDraft]);
    useEffect(() => {
        if (!disabled)
            input.current?.focus();
    }, [disabled]);

    const submit = async (route: RouteRequest) => {
        if (!canSend)
            return;
        const sent = text;
        const edited = editing;
        drafts.current?.cancel();
        setText("");
        input.current?.focus();
        const started = edited != null ? await onResend(edited.messageId, sent, route) : await onSend(sent, route);
        if (!started)
            setText((current) => current === "" ? sent : current);
    };
    const cancelEdit = () => {
        setText(textBeforeEdit.current);
        onCancelEdit();
    };
    const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
        if (event.nativeEvent.isComposing)
            return;
        if (event.key === "Enter" && !event.shiftKey) {
            event.preventDefault();
            void submit("auto");
        } else if (event.key === "Escape") {
            if (editing != null) {
                event.preventDefault();
                cancelEdit();
            } else if (generating) {
                event.preventDefault();
                onStop();
            }
        } else if (event.key === "ArrowUp" && text === "" && !generating && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey) {
            if (onEditLast())
                event.preventDefault();
        }
    };

    return (
        <form className={editing != null ? "composer composer-editing" : "composer"} aria-label="Composer" onSubmit={(event) => {
            event.preventDefault();
            void submit("auto");
        }}>
            <div className="composer-input">
                {editing != null && (
                    <p className="composer-edit-note" id="composer-editing">
                        Editing your message: Enter sends it as a new version (the earlier one is kept), Escape cancels.
                        <button type="button" className="text-button" onClick={cancelEdit}>Cancel edit</button>
                    </p>
                )}
                <textarea ref={input} aria-label="Message" placeholder={placeholder} value={text} rows={Math.min(8, Math.max(2, text.split("\n").length))}
                    disabled={disabled} autoFocus onChange={(event) => change(event.target.value)} onKeyDown={onKeyDown}
                    aria-invalid={overBy > 0}
                    aria-describedby={[overBy > 0 ? "composer-too-long" : null, editing != null ? "composer-editing" : null, "composer-hint"].filter(Boolean).join(" ")} />
                <p id="composer-hint" className="composer-hint">Enter to send · Shift+Enter new line · ↑ edit last · Esc stop</p>
                {overBy > 0 && (
                    <p id="composer-too-long" className="warning-text" role="alert">
                        This message is {formatCount(text.length)} characters; a message can be at most {formatCount(maxMessageTextLength)}.
                        Shorten it by {formatCount(overBy)} to send it.
                    </p>
                )}
            </div>
            <div className="composer-actions">
                {generating && <button type="button" className="button button-danger" onClick={() => {
                    onStop();
                    input.current?.focus();
                }}>Stop</button>}
                <button type="submit" className="button button-primary" disabled={!canSend}>{editing != null ? "Resend" : "Send"}</button>
                {canSendToCloud && (
                    <button type="button" className="button button-cloud" disabled={!canSend} title="Send this turn to the cloud, canary-checked"
                        onClick={() => void submit("cloud")}>Send to cloud</button>
                )}
            </div>
        </form>
    );
}

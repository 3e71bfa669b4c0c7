import {useCallback, useEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent} from "react";
import {maxMessageTextLength} from "../../../src/core/common/api/index.js";
import type {RouteRequest} from "../../../src/core/common/types.js";
import {DraftSaver} from "../DraftSaver.js";
import {formatEnglishCount} from "../format.js";
import type {UploadedAttachment} from "../uploadAttachment.js";
import {AttachmentChips, PaperclipIcon} from "./AttachmentChips.js";

/** A prompt being edited: Enter resends it as a new version (the old exchange is kept). */
export type EditingMessage = {messageId: number, text: string};

/** A document on its way into the next message: being uploaded and read (`upload` null), then read. */
type ComposerAttachment = {key: string, name: string, bytes: number, upload: UploadedAttachment | null};
let nextAttachmentKey = 0;

/**
 * The message box: Enter sends, Shift+Enter adds a line, Escape stops a reply (or cancels an edit),
 * Up in an empty box edits the last prompt. Stop sits beside Send while a reply streams. With
 * `canSendToCloud`, "Send to cloud" sends the turn to the cloud on purpose. What is typed is the
 * conversation's draft, kept in the core as it changes: it survives a refused turn, a reload and a
 * core restart. A message longer than the contract allows is never sent: the limit is shown.
 * Documents come with the paperclip, by dropping files on the chat or by pasting a file: each is a
 * chip (removable) while it waits for Send; a file that cannot be read is named with the reason,
 * and the text and the other documents stay.
 */
export function Composer({conversationId, serverDraft, editing, disabled, generating, canSendToCloud, placeholder,
    onSend, onResend, onStop, onEditLast, onCancelEdit, onSaveDraft, onUpload, onDiscardUpload}: {
    conversationId: string, serverDraft: string | null, editing: EditingMessage | null,
    disabled: boolean, generating: boolean, canSendToCloud: boolean, placeholder: string,
    onSend: (text: string, route: RouteRequest, attachments: UploadedAttachment[]) => Promise<boolean>,
    onResend: (messageId: number, text: string, route: RouteRequest) => Promise<boolean>,
    onStop: () => void, onEditLast: () => boolean, onCancelEdit: () => void,
    onSaveDraft: (conversationId: string, text: string) => Promise<void>,
    onUpload: (file: File) => Promise<UploadedAttachment>,
    onDiscardUpload: (uploadId: string) => void
}) {
    const [text, setText] = useState(serverDraft ?? "");
    const input = useRef<HTMLTextAreaElement>(null);
    const saveDraftNow = useRef(onSaveDraft);
    saveDraftNow.current = onSaveDraft;
    const drafts = useRef<DraftSaver | null>(null);
    drafts.current ??= new DraftSaver((id, value) => void saveDraftNow.current(id, value));
    const textBeforeEdit = useRef("");
    const overBy = text.length - maxMessageTextLength;
    const [attachments, setAttachments] = useState<ComposerAttachment[]>([]);
    const [attachProblem, setAttachProblem] = useState<string | null>(null);
    const fileInput = useRef<HTMLInputElement>(null);
    const form = useRef<HTMLFormElement>(null);
    const removedKeys = useRef(new Set<string>());
    const unmounted = useRef(false);
    const reading = attachments.some((attachment) => attachment.upload == null);
    const canSend = !disabled && !generating && overBy <= 0 && text.trim() !== "" && !reading;

    const attachFiles = useCallback((files: File[]) => {
        if (files.length === 0)
            return;
        setAttachProblem(null);
        for (const file of files) {
            const key = `attachment-${nextAttachmentKey++}`;
            setAttachments((current) => [...current, {key, name: file.name, bytes: file.size, upload: null}]);
            onUpload(file).then((upload) => {
                // Removed while it was being read, or the composer is gone: the core lets go of it too.
                if (removedKeys.current.has(key) || unmounted.current)
                    onDiscardUpload(upload.uploadId);
                else
                    setAttachments((current) => current.map((attachment) => attachment.key === key ? {...attachment, upload} : attachment));
            }, (error: unknown) => {
                setAttachments((current) => current.filter((attachment) => attachment.key !== key));
                const message = error instanceof Error || (typeof error === "object" && error != null && "message" in error)
                    ? String((error as {message: unknown}).message)
                    : String(error);
                setAttachProblem(`Could not attach ${message}`);
            });
        }
    }, [onUpload, onDiscardUpload]);
    const removeAttachment = (key: string) => {
        const removed = attachments.find((attachment) => attachment.key === key);
        removedKeys.current.add(key);
        setAttachments((current) => current.filter((attachment) => attachment.key !== key));
        if (removed?.upload != null)
            onDiscardUpload(removed.upload.uploadId);
        input.current?.focus();
    };
    // Documents left unsent when the composer goes (another conversation opened) are let go in the core.
    const latestAttachments = useRef(attachments);
    latestAttachments.current = attachments;
    const discardUpload = useRef(onDiscardUpload);
    discardUpload.current = onDiscardUpload;
    useEffect(() => {
        unmounted.current = false;
        return () => {
            unmounted.current = true;
            for (const attachment of latestAttachments.current)
                if (attachment.upload != null)
                    discardUpload.current(attachment.upload.uploadId);
        };
    }, []);
    // Files dropped anywhere on the chat are attached (while the composer cannot take them, a drop does nothing rather than open the file).
    const canAttach = !disabled && editing == null;
    useEffect(() => {
        const chat = form.current?.closest<HTMLElement>(".chat");
        if (chat == null)
            return;
        const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") === true;
        const onDragOver = (event: DragEvent) => {
            if (carriesFiles(event)) {
                event.preventDefault();
                event.dataTransfer!.dropEffect = canAttach ? "copy" : "none";
            }
        };
        const onDrop = (event: DragEvent) => {
            if (!carriesFiles(event))
                return;
            event.preventDefault();
            if (canAttach)
                attachFiles([...event.dataTransfer!.files]);
        };
        chat.addEventListener("dragover", onDragOver);
        chat.addEventListener("drop", onDrop);
        return () => {
            chat.removeEventListener("dragover", onDragOver);
            chat.removeEventListener("drop", onDrop);
        };
    }, [attachFiles, canAttach]);
    const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
        if (!canAttach || event.clipboardData.files.length === 0)
            return;
        event.preventDefault();
        const pastedText = event.clipboardData.getData("text/plain");
        // Office apps put a picture of the copied text beside the text itself: the text is what was meant.
        const files = [...event.clipboardData.files].filter((file) => pastedText === "" || !file.type.startsWith("image/"));
        if (files.length > 0)
            attachFiles(files);
        if (pastedText !== "")
            insertAtCaret(event.currentTarget, pastedText);
    };
    const insertAtCaret = (box: HTMLTextAreaElement, inserted: string) => {
        const {selectionStart, selectionEnd, value} = box;
        change(value.slice(0, selectionStart) + inserted + value.slice(selectionEnd));
        const caret = selectionStart + inserted.length;
        requestAnimationFrame(() => box.setSelectionRange(caret, caret));
    };

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
            focusUnlessBusyElsewhere(input.current);
    }, [disabled]);

    const submit = async (route: RouteRequest) => {
        if (!canSend)
            return;
        const sent = text;
        const edited = editing;
        const sentAttachments = edited != null ? [] : attachments;
        drafts.current?.cancel();
        setText("");
        setAttachProblem(null);
        input.current?.focus();
        const started = edited != null
            ? await onResend(edited.messageId, sent, route)
            : await onSend(sent, route, sentAttachments.map((attachment) => attachment.upload!));
        if (!started)
            setText((current) => current === "" ? sent : current);
        else if (sentAttachments.length > 0)
            setAttachments((current) => current.filter((attachment) => !sentAttachments.includes(attachment)));
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
        <form ref={form} className={editing != null ? "composer composer-editing" : "composer"} aria-label="Composer" onSubmit={(event) => {
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
                <AttachmentChips label="Attachments" onRemove={removeAttachment}
                    attachments={attachments.map(({key, name, bytes, upload}) => ({key, name, bytes, pages: upload?.pages, reading: upload == null}))} />
                {attachProblem != null && <p className="warning-text attach-problem" role="alert">{attachProblem}</p>}
                <textarea ref={input} onPaste={onPaste} aria-label="Message" placeholder={placeholder} value={text} rows={Math.min(8, Math.max(2, text.split("\n").length))}
                    disabled={disabled} autoFocus onChange={(event) => change(event.target.value)} onKeyDown={onKeyDown}
                    aria-invalid={overBy > 0}
                    aria-describedby={[overBy > 0 ? "composer-too-long" : null, editing != null ? "composer-editing" : null, "composer-hint"].filter(Boolean).join(" ")} />
                <p id="composer-hint" className="composer-hint">Enter to send · Shift+Enter new line · ↑ edit last · Esc stop</p>
                {overBy > 0 && (
                    <p id="composer-too-long" className="warning-text" role="alert">
                        This message is {formatEnglishCount(text.length)} characters; a message can be at most {formatEnglishCount(maxMessageTextLength)}.
                        Shorten it by {formatEnglishCount(overBy)} to send it.
                    </p>
                )}
            </div>
            <div className="composer-actions">
                <input ref={fileInput} type="file" multiple className="visually-hidden" tabIndex={-1} aria-label="Files to attach"
                    onChange={(event) => {
                        attachFiles([...event.target.files ?? []]);
                        event.target.value = "";
                    }} />
                <button type="button" className="button button-icon" aria-label="Attach files" title="Attach files (PDF, DOCX, text, code)"
                    disabled={!canAttach} onClick={() => fileInput.current?.click()}><PaperclipIcon /></button>
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

const nonTextInputTypes = new Set(["button", "checkbox", "color", "file", "image", "radio", "range", "reset", "submit"]);

/**
 * The message box takes the focus when it appears or becomes usable, unless the user is at work elsewhere: a dialog is open
 * (even where its focused button was just disabled, which leaves the focus on the page), or they are typing in another
 * field. A conversation opened or a model done loading behind Settings took the focus from the field being typed in, and
 * the rest of the typing went into the message box.
 */
function focusUnlessBusyElsewhere(box: HTMLTextAreaElement | null) {
    if (box == null || document.querySelector("[aria-modal='true']") != null)
        return;
    const active = document.activeElement;
    if (active instanceof HTMLElement && active !== box) {
        const typing = active instanceof HTMLTextAreaElement || active instanceof HTMLSelectElement || active.isContentEditable ||
            (active instanceof HTMLInputElement && !nonTextInputTypes.has(active.type));
        if (typing)
            return;
    }
    box.focus();
}

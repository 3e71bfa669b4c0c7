import {maxMessageTextLength} from "../../src/core/common/api/index.js";

/** How long typing pauses before the draft is saved in the core. */
export const draftSaveDelayMs = 300;

type PendingSave = {timer: ReturnType<typeof setTimeout>, conversationId: string, text: string};

/**
 * When the composer's text is saved as the conversation's draft: once typing pauses (`delayMs`),
 * not at each key; never a text longer than a message can be (the composer says it cannot be sent
 * either) nor a prompt being edited. `flush` saves what is pending at once, to the conversation it
 * was typed in (a switch of conversation, a closed page); `cancel` drops it (the text was sent).
 */
export class DraftSaver {
    private readonly _save: (conversationId: string, text: string) => void;
    private readonly _delayMs: number;
    private _pending: PendingSave | null = null;

    public constructor(save: (conversationId: string, text: string) => void, delayMs = draftSaveDelayMs) {
        this._save = save;
        this._delayMs = delayMs;
    }

    public changed(conversationId: string, text: string, {editing}: {editing: boolean}) {
        this.cancel();
        if (editing || text.length > maxMessageTextLength)
            return;
        const timer = setTimeout(() => {
            this._pending = null;
            this._save(conversationId, text);
        }, this._delayMs);
        this._pending = {timer, conversationId, text};
    }

    public flush() {
        const pending = this._pending;
        if (pending == null)
            return;
        this.cancel();
        this._save(pending.conversationId, pending.text);
    }

    public cancel() {
        if (this._pending != null)
            clearTimeout(this._pending.timer);
        this._pending = null;
    }
}

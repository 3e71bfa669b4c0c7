import type {ConversationStore} from "../database/ConversationStore.js";

/**
 * A reply as it streams in: its text so far, saved to its (still `streaming`) message at most
 * once per `saveIntervalMs`, so that a crash keeps what was produced. Local and cloud turns
 * both grow their reply through here.
 */
export class StreamingReply {
    public readonly messageId: number;
    private readonly _store: ConversationStore;
    private readonly _saveIntervalMs: number;
    private readonly _started = performance.now();
    private _text = "";
    private _pieces = 0;
    private _lastSave = 0;
    private _firstPieceMs: number | null = null;

    public constructor(store: ConversationStore, messageId: number, saveIntervalMs: number) {
        this._store = store;
        this.messageId = messageId;
        this._saveIntervalMs = saveIntervalMs;
    }

    public get text() {
        return this._text;
    }

    /** Pieces received so far (one per generated token for local turns). */
    public get pieces() {
        return this._pieces;
    }

    /** From the reply's start to its first piece; null before one arrived. */
    public get firstPieceMs() {
        return this._firstPieceMs;
    }

    /** From the reply's start until now. */
    public elapsedMs() {
        return performance.now() - this._started;
    }

    /**
     * Adds a piece; saves the text when the last save is older than the interval.
     * `tokens`: what the saved message counts as its tokens so far. Defaults to the pieces received.
     */
    public append(piece: string, tokens: number = this._pieces + 1) {
        this._firstPieceMs ??= this.elapsedMs();
        this._text += piece;
        this._pieces++;
        const now = performance.now();
        if (now - this._lastSave >= this._saveIntervalMs) {
            this._lastSave = now;
            this._store.updateMessageContent(this.messageId, this._text, tokens);
        }
    }
}

import {InvalidInputError, toWireError} from "../../common/errors.js";
import type {ApiEventPayload, TurnResult} from "../../common/api/index.js";
import type {CloudSecretsOptions} from "../../common/secretScan/types.js";
import type {ConversationId, RouteRequest, TurnOutcome} from "../../common/types.js";
import type {Core} from "../Core.js";
import {readDocumentOf} from "../documents/AttachmentStore.js";
import type {DocumentSource, ExtractedDocument} from "../documents/extraction/types.js";
import type {CoreEventEmitter} from "../rpc/CoreEventEmitter.js";

type ActiveTurn = {controller: AbortController, assistantMessageId: number | null, done?: Promise<void>};

/** How a turn is asked for: its reply budget, where it should go (`auto` when absent), what a cloud turn does with secrets. */
export type TurnOptions = {
    maxTokens?: number, route?: RouteRequest, secrets?: CloudSecretsOptions,
    /** Documents the turn brings (#23), and whether a cloud turn may send the conversation's documents. */
    attachments?: DocumentSource[], sendAttachments?: boolean,
    /** Documents already read (a regenerated prompt's). */
    readAttachments?: ExtractedDocument[]
};

/**
 * Runs replies in the background, one at a time per conversation: a turn's call returns once
 * its messages are stored; its text streams as events; Stop aborts it. The conversation's draft
 * (the composer's unsent text) is cleared once the prompt is stored as a message, and holds the
 * prompt again when the turn is refused or fails and its prompt is not kept as a message (a cloud
 * turn that fails removes both), so that what the user typed is never lost. A blocked reply keeps
 * its prompt as a message: it is there to edit, copy, or Retry locally.
 */
export class TurnRunner {
    private readonly _core: Core;
    private readonly _events: CoreEventEmitter;
    private readonly _active = new Map<ConversationId, ActiveTurn>();

    public constructor(core: Core, events: CoreEventEmitter) {
        this._core = core;
        this._events = events;
    }

    public isGenerating(conversationId: ConversationId) {
        return this._active.has(conversationId);
    }

    /** Resolves when the turn has started (messages stored); rejects when it cannot start. */
    public start(conversationId: ConversationId, text: string, {maxTokens, route, secrets, attachments, sendAttachments, readAttachments}: TurnOptions = {}): Promise<ApiEventPayload<"turn.started">> {
        if (this._active.has(conversationId))
            throw new InvalidInputError("chat.send", ["a reply is already being generated in this conversation; stop it first"]);

        const turn: ActiveTurn = {controller: new AbortController(), assistantMessageId: null};
        this._active.set(conversationId, turn);
        return new Promise((resolve, reject) => {
            let started = false;
            let userMessageId: number | null = null;
            turn.done = this._core.sendMessage({conversationId, text, maxTokens, route, secrets, attachments, sendAttachments, readAttachments}, {
                signal: turn.controller.signal,
                onStarted: (ids) => {
                    started = true;
                    userMessageId = ids.userMessageId;
                    this._core.saveDraft(conversationId, "");
                    turn.assistantMessageId = ids.assistantMessageId;
                    const payload = {conversationId, ...ids};
                    this._events.emit("turn.started", payload);
                    resolve(payload);
                },
                onText: (piece) => {
                    if (turn.assistantMessageId != null)
                        this._events.emit("message.text", {conversationId, messageId: turn.assistantMessageId, text: piece});
                }
            }).then((result) => {
                this._events.emit("turn.finished", turnResultView(result));
            }, (error: unknown) => {
                this._keepAsDraft(conversationId, text, userMessageId);
                if (started)
                    this._events.emit("turn.error", {conversationId, messageId: turn.assistantMessageId, error: toWireError(error)});
                else
                    reject(error);
            }).finally(() => {
                if (this._active.get(conversationId) === turn)
                    this._active.delete(conversationId);
            });
        });
    }

    /**
     * Edit and resend: the prompt and what follows leave the shown branch (kept), and `text` is sent in
     * its place with the documents the prompt had (the older version keeps its own).
     */
    public editAndResend(conversationId: ConversationId, messageId: number, text: string, options: TurnOptions = {}) {
        if (this._active.has(conversationId))
            throw new InvalidInputError("chat.editAndResend", ["a reply is already being generated in this conversation; stop it first"]);

        const documents = this._core.documentsOfMessage(conversationId, messageId).map(readDocumentOf);
        const taken = this._core.branchBefore(conversationId, messageId);
        const readAttachments = [...documents, ...options.readAttachments ?? []];
        return this.start(conversationId, text, {...options, readAttachments}).catch((error: unknown) => {
            // Refused before it started: the branch as it was is shown again.
            this._core.restoreBranch(conversationId, taken);
            throw error;
        });
    }

    public stop(conversationId: ConversationId): boolean {
        const turn = this._active.get(conversationId);
        if (turn == null)
            return false;

        turn.controller.abort();
        return true;
    }

    /** Removes the last prompt and everything after it, then asks again with the same prompt. */
    public regenerate(conversationId: ConversationId, options: TurnOptions = {}) {
        if (this._active.has(conversationId))
            throw new InvalidInputError("chat.regenerate", ["a reply is already being generated in this conversation; stop it first"]);

        const {prompt, removed, documents} = this._core.rewindToLastPrompt(conversationId, {route: options.route ?? "auto"});
        return this.start(conversationId, prompt, {...options, readAttachments: documents.map(readDocumentOf)}).catch((error: unknown) => {
            // Refused before it started (too large, cloud not allowed…): the prompt and its reply are put back (not into the composer too).
            this._core.restoreMessages(conversationId, removed, documents);
            if (this._core.draftOf(conversationId) === prompt)
                this._core.saveDraft(conversationId, "");
            throw error;
        });
    }

    /** A prompt not kept as a message goes back to the composer, unless the user typed something else since. */
    private _keepAsDraft(conversationId: ConversationId, text: string, userMessageId: number | null) {
        try {
            if (this._core.findConversation(conversationId) == null || this._core.draftOf(conversationId).trim() !== "")
                return;
            if (userMessageId == null || !this._core.getConversation(conversationId).messages.some((message) => message.id === userMessageId))
                this._core.saveDraft(conversationId, text);
        } catch {
            // The conversation was deleted meanwhile: there is no composer to give the text back to.
        }
    }

    /** Stops every reply in progress (host shutdown). */
    public stopAll() {
        for (const turn of this._active.values())
            turn.controller.abort();
    }

    /** Stops every reply in progress and waits until each has finished writing what it keeps ("Delete everything" comes after). */
    public async stopAllAndWait(): Promise<void> {
        const running = [...this._active.values()];
        this.stopAll();
        await Promise.all(running.map((turn) => turn.done));
    }
}

/** What `turn.finished` carries: the result without the reply's text (sent as `message.text`), and of the cloud's report its summary. */
function turnResultView(result: TurnOutcome): TurnResult {
    if (result.route === "local") {
        const {reply, firstTokenProbabilities, ...view} = result;
        return view;
    }
    const {reply, cloud: {blocked, canariesPlanted, warnings, verdict, finishReason}, ...view} = result;
    return {...view, cloud: {blocked, canariesPlanted, warnings, verdict, finishReason}};
}

import {CleanroomError} from "../../common/errors.js";
import type {ConversationId, LocalTurnResult} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import type {AttachmentStore} from "../documents/AttachmentStore.js";
import type {DocumentEmbedder, EmbeddingScrub} from "../documents/embedding/DocumentEmbedder.js";
import {recordEmbeddingScrub} from "../documents/embedding/recordEmbeddingScrub.js";
import type {ReplySource, ReplySources} from "../documents/ReplySources.js";
import {planDocumentTurn, turnAttachmentReport, type DocumentTurnPlan, type TurnEmbedder} from "../documents/planDocumentTurn.js";
import type {ChatTurnInput, LocalEngine, PreparedPrompt} from "../engine/LocalEngine.js";
import type {ConversationStore} from "../database/ConversationStore.js";
import {StreamingReply} from "./StreamingReply.js";
import type {SendMessageCallbacks, TurnRequest} from "./types.js";

export type LocalTurnServiceOptions = {
    store: ConversationStore,
    audit: AuditLog,
    engine: LocalEngine,
    attachments: AttachmentStore,
    /** Where each reply's citations are recorded (#23 item 4). */
    replySources: ReplySources,
    /** How often a growing reply is written to the database. */
    streamSaveIntervalMs: number,
    /** The embedding model chosen for documents (`EmbeddingModelChoice.current`). Defaults to none: retrieval is BM25 alone. */
    embedder?: () => Promise<DocumentEmbedder | null>
};

/** A prompt ready to evaluate, with what it holds of the conversation's documents (null: none). */
export type PreparedTurn = PreparedPrompt & {
    documents: DocumentTurnPlan | null,
    /** The embedding context's scrub of a conversation not stored yet, recorded once the turn is accepted (null: none, or recorded). */
    unrecordedEmbeddingScrub?: EmbeddingScrub | null
};

/** Why the local engine cannot serve a turn: no model loaded, or a prompt larger than the context. */
export type LocalTurnProblem = CleanroomError & {code: "CONTEXT_OVERFLOW" | "MODEL_NOT_LOADED"};

/**
 * Turns on the local engine: the prompt is built and checked against the context before
 * anything is stored or evaluated; the reply is saved as it grows and finished as complete or
 * interrupted; every step goes to the audit log.
 */
export class LocalTurnService {
    private readonly _store: ConversationStore;
    private readonly _audit: AuditLog;
    private readonly _engine: LocalEngine;
    private readonly _attachments: AttachmentStore;
    private readonly _replySources: ReplySources;
    private readonly _streamSaveIntervalMs: number;
    private readonly _embedder: () => Promise<DocumentEmbedder | null>;

    public constructor({store, audit, engine, attachments, replySources, streamSaveIntervalMs, embedder = async () => null}: LocalTurnServiceOptions) {
        this._embedder = embedder;
        this._store = store;
        this._audit = audit;
        this._engine = engine;
        this._attachments = attachments;
        this._replySources = replySources;
        this._streamSaveIntervalMs = streamSaveIntervalMs;
    }

    /**
     * The prompt for `request`, or why the local engine cannot serve it (any other failure is thrown,
     * `ScrubUnverifiedError` among them when the scrub of the embedding context could not be verified).
     */
    public async prepare(request: TurnRequest): Promise<{prepared: PreparedTurn, problem: null} | {prepared: null, problem: LocalTurnProblem}> {
        try {
            const conversationId = request.conversation.id;
            const attached = request.attachments ?? [];
            const stored = this._store.find(conversationId) != null;
            const hasRetrieved = stored && this._attachments.hasRetrieved(conversationId);
            if (attached.length === 0 && !hasRetrieved)
                return {prepared: {...this._engine.preparePrompt(engineInputOf(request)), documents: null}, problem: null};
            const documents = await planDocumentTurn({
                conversationId, text: request.text, attached, hasRetrieved, contextSize: this._engine.info?.contextSize ?? 0,
                prepare: (userText) => this._engine.preparePrompt({...engineInputOf(request), userText}),
                countTokens: (text) => this._engine.countTokens(text),
                attachments: this._attachments,
                embedder: async () => {
                    const embedder = await this._embedder();
                    return embedder == null ? null : this._recordingScrubs(embedder, stored ? conversationId : null);
                }
            });
            return {prepared: {...documents.prepared, documents, unrecordedEmbeddingScrub: stored ? null : documents.embeddingScrub}, problem: null};
        } catch (error) {
            if (error instanceof CleanroomError && (error.code === "CONTEXT_OVERFLOW" || error.code === "MODEL_NOT_LOADED"))
                return {prepared: null, problem: error as LocalTurnProblem};
            throw error;
        }
    }

    public async run(request: TurnRequest, prepared: PreparedTurn, routeReason: string, callbacks: SendMessageCallbacks = {}): Promise<LocalTurnResult> {
        const conversationId = request.conversation.id;
        if (prepared.dropped.droppedMessages > 0)
            this._audit.record({kind: "history.dropped", conversationId, data: {...prepared.dropped, policy: "drop-oldest"}});

        const documents = prepared.documents;
        const {user, reply: replyMessage} = this._attachments.transaction(() => {
            // The history holds the conversation's earlier documents given whole: the reply is given them again (not cited under it).
            const earlierWhole = this._attachments.ofConversation(conversationId).filter((document) => document.mode === "whole");
            const appended = this._store.appendTurn(conversationId, request.text, {route: "local", routeReason});
            const broughtIds = (documents?.attachments ?? []).map((attachment) => this._attachments.add(conversationId, appended.user.id, attachment));
            this._replySources.record(conversationId, appended.reply.id, {route: "local"}, [
                ...earlierWhole.map((document) => ({attachmentId: document.id, chunkId: null, cited: false})),
                ...documents == null ? [] : this._sourcesOf(conversationId, documents, broughtIds)
            ]);
            return appended;
        });
        // The embedding scrub of a conversation stored only now (its first turn) is recorded once it exists.
        if (prepared.unrecordedEmbeddingScrub != null)
            this._recordEmbeddingScrub(conversationId, prepared.unrecordedEmbeddingScrub);
        if (documents != null)
            this._audit.record({kind: "turn.documents", conversationId, data: {
                attached: documents.attachments.length,
                whole: documents.attachments.filter((attachment) => attachment.mode === "whole").length,
                passages: documents.passages.length,
                ...documents.backfilledVectors > 0 ? {backfilledVectors: documents.backfilledVectors} : {}
            }});
        callbacks.onStarted?.({userMessageId: user.id, assistantMessageId: replyMessage.id});

        const reply = new StreamingReply(this._store, replyMessage.id, this._streamSaveIntervalMs);
        try {
            const result = await this._engine.runTurn({
                ...engineInputOf(request),
                signal: callbacks.signal,
                onPrefill: callbacks.onPrefill,
                captureFirstTokenProbabilities: callbacks.captureFirstTokenProbabilities,
                onText: (piece) => {
                    reply.append(piece);
                    callbacks.onText?.(piece);
                }
            }, prepared);

            const status = result.finishReason === "aborted" ? "interrupted" : "complete";
            const generated = result.tokens.length;
            const tokensPerSecond = generated > 1 && result.firstTokenMs != null && result.decodeMs > result.firstTokenMs
                ? (generated - 1) / ((result.decodeMs - result.firstTokenMs) / 1000)
                : null;
            this._store.finishMessage(reply.messageId, {content: result.text, status, tokens: generated, tokensPerSecond});
            this._audit.record({kind: "turn.local", conversationId, data: {
                messageId: reply.messageId, contextId: result.isolation.contextId, promptTokens: prepared.tokens.length,
                evaluatedTokens: result.evaluatedPromptTokens, reusedTokens: result.reusedPromptTokens,
                generatedTokens: result.tokens.length, finishReason: result.finishReason,
                kvCells: result.isolation.kvCells, tokensInContext: result.isolation.tokensInContext
            }});

            return {
                conversationId,
                route: "local",
                routeReason,
                userMessageId: user.id,
                assistantMessageId: reply.messageId,
                reply: result.text,
                status,
                tokens: {prompt: prepared.tokens.length, evaluated: result.evaluatedPromptTokens, reused: result.reusedPromptTokens, generated},
                finishReason: result.finishReason,
                history: prepared.dropped,
                isolation: {
                    contextId: result.isolation.contextId, kvCells: result.isolation.kvCells,
                    kvBytes: result.isolation.kvBytes, threads: result.isolation.threads
                },
                timings: {
                    firstTokenMs: result.firstTokenMs,
                    totalMs: reply.elapsedMs(),
                    tokensPerSecond
                },
                ...(documents != null ? {
                    attachments: turnAttachmentReport(documents),
                    retrieved: documents.passages.filter((passage) => passage.attachmentId != null).map((passage) => ({
                        name: passage.name, page: passage.page, startLine: passage.startLine, endLine: passage.endLine, chars: passage.text.length
                    }))
                } : {}),
                ...(result.firstTokenProbabilities != null ? {firstTokenProbabilities: result.firstTokenProbabilities} : {})
            };
        } catch (error) {
            this._store.finishMessage(reply.messageId, {content: reply.text, status: "interrupted", tokens: reply.pieces});
            throw error;
        }
    }
    /**
     * The embedder as a turn uses it: each call's scrub is recorded as the conversation's (or, for a
     * conversation not stored yet, once its turn is accepted); a scrub that could not be verified is
     * a security fault, recorded and thrown (`ScrubUnverifiedError`): the turn does not go on.
     */
    private _recordingScrubs(embedder: DocumentEmbedder, storedConversationId: ConversationId | null): TurnEmbedder {
        return {
            modelId: embedder.modelId,
            embed: async (texts) => {
                const batch = await embedder.embed(texts);
                if (storedConversationId != null || !batch.scrub.verified)
                    this._recordEmbeddingScrub(storedConversationId, batch.scrub);
                return batch;
            }
        };
    }

    private _recordEmbeddingScrub(conversationId: ConversationId | null, scrub: EmbeddingScrub) {
        recordEmbeddingScrub(this._audit, conversationId, scrub);
    }

    /** What a reply is cited with: the documents its turn brought whole, and each passage it was given (as its stored chunk). */
    private _sourcesOf(conversationId: ConversationId, documents: DocumentTurnPlan, broughtIds: readonly number[]): ReplySource[] {
        const sources: ReplySource[] = documents.attachments.flatMap((attachment, index) =>
            attachment.mode === "whole" ? [{attachmentId: broughtIds[index]!, chunkId: null, cited: true}] : []);
        // A passage of a document this turn brought was retrieved before the document was stored: `pendingIndex` is its place among the turn's retrieved documents.
        const broughtRetrievedIds = broughtIds.filter((_, index) => documents.attachments[index]!.mode === "retrieved");
        for (const passage of documents.passages) {
            const attachmentId = passage.attachmentId ?? (passage.pendingIndex == null ? undefined : broughtRetrievedIds[passage.pendingIndex]);
            const chunkId = attachmentId == null ? null : this._replySources.chunkIdOf(conversationId, attachmentId, passage);
            if (attachmentId != null && chunkId != null)
                sources.push({attachmentId, chunkId, cited: true});
        }
        return sources;
    }
}

function engineInputOf(request: TurnRequest): ChatTurnInput & {conversationId: ConversationId} {
    return {
        conversationId: request.conversation.id,
        settings: request.conversation.settings,
        history: request.history,
        userText: request.text,
        maxTokens: request.maxTokens,
        temperature: request.temperature,
        seed: request.seed
    };
}

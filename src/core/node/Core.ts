import type Database from "better-sqlite3";
import type {Llama} from "node-llama-cpp";
import {CleanroomError} from "../common/errors.js";
import type {
    AuditEvent, Conversation, ConversationId, ConversationPolicy, ConversationSettings, ConversationSummary,
    LocalTurnResult, Message, ScrubReport, SessionEndReason
} from "../common/types.js";
import {AuditLog} from "./audit/AuditLog.js";
import type {SessionEnd} from "./engine/ConversationContext.js";
import {LocalEngine, type LoadedModelInfo, type LocalEngineOptions} from "./engine/LocalEngine.js";
import {ConversationStore, type NewConversation} from "./store/ConversationStore.js";
import {SettingsStore} from "./store/SettingsStore.js";
import {openDatabase} from "./store/openDatabase.js";

export type CoreOptions = {
    /** SQLite file, or ":memory:". */
    database: string,
    engine?: LocalEngineOptions,
    /** How often a growing reply is written to the database. Defaults to `100` ms. */
    streamSaveIntervalMs?: number
};

export type SendMessageInput = {
    conversationId: ConversationId,
    text: string,
    maxTokens?: number,
    temperature?: number,
    seed?: number | null
};

export type SendMessageCallbacks = {
    signal?: AbortSignal,
    onText?: (text: string) => void,
    /** Called once the user message and the (still empty) reply are stored. */
    onStarted?: (ids: {userMessageId: number, assistantMessageId: number}) => void,
    captureFirstTokenProbabilities?: boolean
};

export type IsolationReport = {
    conversationId: ConversationId,
    live: {contextId: string, kvCells: number, kvBytes: number, tokensInContext: number, threads: number} | null,
    lastScrub: (ScrubReport & {at: number}) | null,
    scrubs: {verified: number, failed: number},
    refusals: number,
    routes: {local: number, cloud: number},
    events: AuditEvent[]
};

export const defaultStreamSaveIntervalMs = 100;

/**
 * The core's one door for front ends (CLI, RPC): conversations in SQLite, the local engine,
 * and the audit log. It delegates; the work lives in the services it holds.
 */
export class Core {
    public readonly audit: AuditLog;
    public readonly store: ConversationStore;
    public readonly settings: SettingsStore;
    public readonly engine: LocalEngine;
    private readonly _db: Database.Database;
    private readonly _streamSaveIntervalMs: number;
    private readonly _lastSessionEnd = new Map<ConversationId, SessionEnd>();
    private _closed = false;

    private constructor(db: Database.Database, llama: Llama, options: CoreOptions) {
        this._db = db;
        this.audit = new AuditLog(db);
        this.store = new ConversationStore(db);
        this.settings = new SettingsStore(db);
        this.engine = new LocalEngine(llama, this.audit, this.settings, options.engine);
        this._streamSaveIntervalMs = options.streamSaveIntervalMs ?? defaultStreamSaveIntervalMs;
    }

    public static create(llama: Llama, options: CoreOptions) {
        return new Core(openDatabase(options.database), llama, options);
    }

    public get database() {
        return this._db;
    }

    public async loadModel(modelPath: string): Promise<LoadedModelInfo> {
        const info = await this.engine.loadModel(modelPath);
        this.engine.pool?.onSessionEnd((end) => this._lastSessionEnd.set(end.conversationId, end));
        return info;
    }

    public createConversation(input: NewConversation = {}): Conversation {
        const conversation = this.store.create(input);
        this.audit.record({kind: "conversation.created", conversationId: conversation.id, data: {policy: conversation.policy}});
        return conversation;
    }

    public listConversations(): ConversationSummary[] {
        return this.store.list();
    }

    public getConversation(conversationId: ConversationId): {conversation: Conversation, messages: Message[]} {
        return {conversation: this.store.get(conversationId), messages: this.store.messages(conversationId)};
    }

    public updateConversation(conversationId: ConversationId, changes: {title?: string, policy?: ConversationPolicy, settings?: Partial<ConversationSettings>}) {
        const updated = this.store.update(conversationId, changes);
        if (changes.policy != null)
            this.audit.record({kind: "conversation.policy", conversationId, data: {policy: changes.policy}});
        return updated;
    }

    /** Ends the conversation's session (scrubbing its context) and returns the scrub report. */
    public async closeConversation(conversationId: ConversationId, reason: SessionEndReason = "close"): Promise<ScrubReport | null> {
        const end = await this.engine.endSession(conversationId, reason);
        return end == null ? null : toScrubReport(end);
    }

    /** Scrubs the conversation's context, then deletes it with its messages and audit trail. */
    public async deleteConversation(conversationId: ConversationId): Promise<ScrubReport | null> {
        this.store.get(conversationId);
        const report = await this.closeConversation(conversationId, "delete");
        this.store.delete(conversationId);
        this._lastSessionEnd.delete(conversationId);
        this.audit.record({kind: "conversation.deleted", data: {scrubVerified: report?.verified ?? null}});
        return report;
    }

    /**
     * One local turn. The prompt is checked against the context before anything is stored or
     * evaluated; the reply is saved as it grows and finished as complete or interrupted.
     */
    public async sendMessage(input: SendMessageInput, callbacks: SendMessageCallbacks = {}): Promise<LocalTurnResult> {
        const conversation = this.store.get(input.conversationId);
        const history = this.store.messages(conversation.id)
            .filter((message) => message.status === "complete" || (message.status === "interrupted" && message.content !== ""))
            .map((message) => ({role: message.role, content: message.content}));
        const turnInput = {
            conversationId: conversation.id,
            settings: conversation.settings,
            history,
            userText: input.text,
            maxTokens: input.maxTokens,
            temperature: input.temperature,
            seed: input.seed
        };

        let prepared;
        try {
            prepared = this.engine.preparePrompt(turnInput);
        } catch (error) {
            if (error instanceof CleanroomError && error.code === "CONTEXT_OVERFLOW")
                this.audit.record({kind: "turn.refused", conversationId: conversation.id, data: {...error.details}});
            throw error;
        }
        if (prepared.dropped.droppedMessages > 0)
            this.audit.record({kind: "history.dropped", conversationId: conversation.id, data: {...prepared.dropped, policy: "drop-oldest"}});

        const routeReason = "local engine serves this conversation";
        const userMessage = this.store.appendMessage(conversation.id, {role: "user", content: input.text, status: "complete"});
        const reply = this.store.appendMessage(conversation.id, {role: "assistant", content: "", status: "streaming", route: "local", routeReason});
        callbacks.onStarted?.({userMessageId: userMessage.id, assistantMessageId: reply.id});

        let text = "";
        let generated = 0;
        let lastSave = 0;
        const started = performance.now();
        try {
            const result = await this.engine.runTurn({
                ...turnInput,
                signal: callbacks.signal,
                captureFirstTokenProbabilities: callbacks.captureFirstTokenProbabilities,
                onText: (piece) => {
                    text += piece;
                    generated++;
                    const now = performance.now();
                    if (now - lastSave >= this._streamSaveIntervalMs) {
                        lastSave = now;
                        this.store.updateMessageContent(reply.id, text, generated);
                    }
                    callbacks.onText?.(piece);
                }
            }, prepared);

            const status = result.finishReason === "aborted" ? "interrupted" : "complete";
            this.store.finishMessage(reply.id, {content: result.text, status, tokens: result.tokens.length});
            this.audit.record({kind: "turn.local", conversationId: conversation.id, data: {
                contextId: result.context.id, promptTokens: prepared.tokens.length, evaluatedTokens: result.evaluatedPromptTokens,
                reusedTokens: result.reusedPromptTokens, generatedTokens: result.tokens.length, finishReason: result.finishReason,
                kvCells: result.context.kvCells, tokensInContext: result.context.tokensInContext
            }});
            for (const evicted of result.evicted)
                this.audit.record({kind: "context.evicted", conversationId: evicted, data: {forConversation: conversation.id}});

            const totalMs = performance.now() - started;
            return {
                conversationId: conversation.id,
                route: "local",
                routeReason,
                userMessageId: userMessage.id,
                assistantMessageId: reply.id,
                reply: result.text,
                status,
                tokens: {
                    prompt: prepared.tokens.length, evaluated: result.evaluatedPromptTokens,
                    reused: result.reusedPromptTokens, generated: result.tokens.length
                },
                finishReason: result.finishReason,
                history: prepared.dropped,
                isolation: {
                    contextId: result.context.id, kvCells: result.context.kvCells,
                    kvBytes: result.context.kvBytes, threads: result.context.threads
                },
                timings: {
                    firstTokenMs: result.firstTokenMs,
                    totalMs,
                    tokensPerSecond: result.tokens.length > 1 && result.firstTokenMs != null
                        ? (result.tokens.length - 1) / ((result.decodeMs - result.firstTokenMs) / 1000)
                        : null
                },
                ...(result.firstTokenProbabilities != null ? {firstTokenProbabilities: result.firstTokenProbabilities} : {})
            } as LocalTurnResult;
        } catch (error) {
            this.store.finishMessage(reply.id, {content: text, status: "interrupted", tokens: generated});
            throw error;
        }
    }

    public isolationReport(conversationId: ConversationId): IsolationReport {
        this.store.get(conversationId);
        const context = this.engine.pool?.peek(conversationId);
        const events = this.audit.events({conversationId});
        const lastScrubEvent = [...events].reverse().find((event) => event.kind === "scrub.verified" || event.kind === "scrub.failed");
        return {
            conversationId,
            live: context == null || context.ended ? null : {
                contextId: context.id, kvCells: context.kvCells, kvBytes: context.kvBytes,
                tokensInContext: context.tokensInContext, threads: context.threads
            },
            lastScrub: lastScrubEvent == null ? null : {
                ...(lastScrubEvent.data as Omit<ScrubReport, "verified">),
                verified: lastScrubEvent.kind === "scrub.verified",
                at: lastScrubEvent.at
            } as ScrubReport & {at: number},
            scrubs: {
                verified: events.filter((event) => event.kind === "scrub.verified").length,
                failed: events.filter((event) => event.kind === "scrub.failed").length
            },
            refusals: events.filter((event) => event.kind === "turn.refused").length,
            routes: {
                local: events.filter((event) => event.kind === "turn.local").length,
                cloud: events.filter((event) => event.kind === "turn.cloud").length
            },
            events
        };
    }

    /** The scrub report of the conversation's last session end in this process. */
    public lastScrubReport(conversationId: ConversationId): ScrubReport | null {
        const end = this._lastSessionEnd.get(conversationId);
        return end == null ? null : toScrubReport(end);
    }

    /** Ends every session (each scrubbed), unloads the model and closes the database. */
    public async close() {
        if (this._closed)
            return;

        this._closed = true;
        await this.engine.shutdown();
        this._db.close();
    }
}

export function toScrubReport(end: SessionEnd): ScrubReport {
    return {
        contextId: end.contextId,
        kvCells: end.kvCells,
        layers: end.layers,
        bytesZeroed: end.bytesZeroed,
        bytesChecked: end.bytesChecked,
        nonZeroBytes: end.nonZeroBytes,
        cellsReadBack: end.cellsReadBack,
        verified: end.verified,
        durationMs: Math.round(end.durationMs * 1000) / 1000,
        reason: end.reason
    };
}

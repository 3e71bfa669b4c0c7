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
import type {DeletionPurgerOptions, PurgeState} from "./store/DeletionPurger.js";
import {SettingsStore} from "./store/SettingsStore.js";
import {openDatabase} from "./store/openDatabase.js";
import {CanaryLedger} from "./cloud/CanaryLedger.js";
import {CloudClient, type CloudChatMessage, type CloudClientOptions} from "./cloud/CloudClient.js";
import {EndpointTokenizerCache} from "./cloud/EndpointTokenizerCache.js";
import {runGuardedCloudTurn} from "./cloud/runGuardedCloudTurn.js";
import {FingerprintIndex} from "../common/cloud/fingerprints.js";
import {chooseRoute, type RouteRequest} from "./routing/chooseRoute.js";
import crypto from "node:crypto";

export type CoreOptions = {
    /** SQLite file, or ":memory:". */
    database: string,
    engine?: LocalEngineOptions,
    /** How often a growing reply is written to the database. Defaults to `100` ms. */
    streamSaveIntervalMs?: number,
    /**
     * How long `deleteConversation` keeps retrying a purge that another connection's read snapshot
     * blocks, before it answers `purge: "pending"` (the purger goes on trying). Defaults to `500` ms.
     */
    deletionGraceMs?: number,
    /** Passed to the store's `DeletionPurger` (how often a pending purge is retried). */
    purge?: DeletionPurgerOptions,
    cloud?: CloudAccess
};

/** How the core reaches the shared cloud. Endpoint, model and switches live in the settings. */
export type CloudAccess = {
    /**
     * The API key for a request to `endpoint`: from the OS keychain in the app (only for the
     * endpoint it was given for), from CLEANROOM_CLOUD_API_KEY in the CLI. Never stored by the core.
     */
    apiKey?: (endpoint: string) => Promise<string | null> | string | null,
    /**
     * The install's secret key for fingerprints of the user's conversations (HMAC-SHA-256, at
     * least 16 bytes): from the secret vault in the app (`FingerprintKeyStore`). Defaults to 32
     * random bytes made when the core starts, kept in memory only.
     */
    fingerprintKey?: () => Promise<Uint8Array> | Uint8Array,
    clientOptions?: CloudClientOptions,
    /** One more canary per this many characters of long messages. Defaults to `1500`. */
    charsPerCanary?: number,
    /** Characters a cloud reply streams behind the scanner's own scan-ahead (see `runGuardedCloudTurn`). Defaults to `0`. */
    holdBackChars?: number,
    /** Used instead of the stored settings (the CLI's --endpoint, --cloud-model), never saved. */
    settingsOverride?: Partial<CloudSettings>
};

export type CloudSettings = {
    endpoint: string | null,
    model: string | null,
    /** Tokens the endpoint accepts; null: ask the endpoint. */
    contextLimit: number | null,
    /** The global cloud-fallback switch. Off by default. */
    fallback: boolean
};

export const cloudSettingKeys = {
    endpoint: "cloud.endpoint",
    model: "cloud.model",
    contextLimit: "cloud.contextLimit",
    fallback: "cloud.fallback"
} as const;

export type SendMessageInput = {
    conversationId: ConversationId,
    text: string,
    maxTokens?: number,
    temperature?: number,
    seed?: number | null,
    /** `auto` (the default): local, unless the local engine cannot serve the turn and the cloud is allowed. */
    route?: RouteRequest
};

export type SendMessageCallbacks = {
    signal?: AbortSignal,
    onText?: (text: string) => void,
    /** Called once the user message and the (still empty) reply are stored. */
    onStarted?: (ids: {userMessageId: number, assistantMessageId: number}) => void,
    /** Local turns: called after each prefill step with the prompt tokens in the context and the prompt's length. */
    onPrefill?: (tokensInContext: number, promptTokens: number) => void,
    captureFirstTokenProbabilities?: boolean
};

export type IsolationReport = {
    conversationId: ConversationId,
    live: {contextId: string, kvCells: number, kvBytes: number, tokensInContext: number, threads: number} | null,
    lastScrub: (ScrubReport & {at: number}) | null,
    scrubs: {verified: number, failed: number},
    refusals: number,
    routes: {local: number, cloud: number},
    cloud: {canariesPlanted: number, checksPassed: number, blocked: number, flagged: number},
    events: AuditEvent[]
};

export const defaultStreamSaveIntervalMs = 100;
export const defaultDeletionGraceMs = 500;
const deletionRetryMs = 100;

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
    private readonly _deletionGraceMs: number;
    private readonly _lastSessionEnd = new Map<ConversationId, SessionEnd>();
    private readonly _cloud: CloudAccess;
    private readonly _canaries: CanaryLedger;
    /** Which cloud endpoints count tokens for us (`/tokenize`), learnt once per endpoint. */
    private readonly _cloudTokenizers = new EndpointTokenizerCache();
    private readonly _fingerprintKey: () => Promise<Uint8Array>;
    private _closed = false;

    private constructor(db: Database.Database, llama: Llama, options: CoreOptions) {
        this._db = db;
        this.audit = new AuditLog(db);
        this.store = new ConversationStore(db, {audit: this.audit, purge: options.purge});
        this.settings = new SettingsStore(db);
        this.engine = new LocalEngine(llama, this.audit, this.settings, options.engine);
        this._streamSaveIntervalMs = options.streamSaveIntervalMs ?? defaultStreamSaveIntervalMs;
        this._deletionGraceMs = options.deletionGraceMs ?? defaultDeletionGraceMs;
        this._cloud = options.cloud ?? {};
        this._canaries = new CanaryLedger(db);
        const processKey = new Uint8Array(crypto.randomBytes(32));
        const fingerprintKey = this._cloud.fingerprintKey;
        this._fingerprintKey = async () => fingerprintKey != null ? await fingerprintKey() : processKey;
    }

    public cloudSettings(): CloudSettings {
        return {
            endpoint: this.settings.get<string>(cloudSettingKeys.endpoint) ?? null,
            model: this.settings.get<string>(cloudSettingKeys.model) ?? null,
            contextLimit: this.settings.get<number>(cloudSettingKeys.contextLimit) ?? null,
            fallback: this.settings.get<boolean>(cloudSettingKeys.fallback) ?? false,
            ...this._cloud.settingsOverride
        };
    }

    public setCloudSettings(changes: Partial<CloudSettings>): CloudSettings {
        for (const [field, key] of Object.entries(cloudSettingKeys) as Array<[keyof CloudSettings, string]>) {
            const value = changes[field];
            if (value === undefined)
                continue;
            if (value === null)
                this.settings.delete(key);
            else
                this.settings.set(key, value);
        }
        const next = this.cloudSettings();
        this.audit.record({kind: "cloud.settings", data: {fallback: next.fallback, endpointSet: next.endpoint != null, model: next.model}});
        return next;
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

    /**
     * Scrubs the conversation's context, then deletes it with its messages and audit trail.
     * `purge: "pending"`: another connection's read snapshot keeps the deleted text in the database
     * file and WAL; the store's purger finishes the purge once that reader is done (on a timer, at
     * the next write, at close) and records `deletion.purged`.
     */
    public async deleteConversation(conversationId: ConversationId): Promise<{scrub: ScrubReport | null, purge: PurgeState}> {
        this.store.get(conversationId);
        const scrub = await this.closeConversation(conversationId, "delete");
        let {purge} = this.store.delete(conversationId);
        this._lastSessionEnd.delete(conversationId);
        // A reader just finishing its snapshot: give it a moment before answering "pending".
        for (let waited = 0; purge === "pending" && waited < this._deletionGraceMs; waited += deletionRetryMs) {
            await new Promise((resolve) => setTimeout(resolve, deletionRetryMs));
            purge = this.store.purger.tryPurge("deletion") ?? "done";
        }
        this.audit.record({kind: "conversation.deleted", data: {scrubVerified: scrub?.verified ?? null, purge}});
        return {scrub, purge};
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

        let prepared: ReturnType<LocalEngine["preparePrompt"]> | null = null;
        let localProblem: CleanroomError | null = null;
        try {
            prepared = this.engine.preparePrompt(turnInput);
        } catch (error) {
            if (!(error instanceof CleanroomError) || (error.code !== "CONTEXT_OVERFLOW" && error.code !== "MODEL_NOT_LOADED"))
                throw error;
            localProblem = error;
        }

        const cloud = this.cloudSettings();
        let decision;
        try {
            decision = chooseRoute({
                policy: conversation.policy,
                cloudFallback: cloud.fallback,
                cloudConfigured: cloud.endpoint != null && cloud.model != null,
                requested: input.route ?? "auto",
                localProblem
            });
        } catch (error) {
            if (error instanceof CleanroomError && error.code === "CONTEXT_OVERFLOW")
                this.audit.record({kind: "turn.refused", conversationId: conversation.id, data: {...error.details}});
            throw error;
        }
        if (decision.route === "cloud")
            return await this._sendCloud(conversation.id, conversation.settings, history, input, decision.reason, callbacks);

        return await this._sendLocal(conversation.id, turnInput, prepared!, decision.reason, callbacks);
    }

    private async _sendLocal(
        conversationId: ConversationId,
        turnInput: Parameters<LocalEngine["preparePrompt"]>[0] & {conversationId: ConversationId, temperature?: number, seed?: number | null},
        prepared: ReturnType<LocalEngine["preparePrompt"]>,
        routeReason: string,
        callbacks: SendMessageCallbacks
    ): Promise<LocalTurnResult> {
        const conversation = {id: conversationId};
        const input = {text: turnInput.userText};
        if (prepared.dropped.droppedMessages > 0)
            this.audit.record({kind: "history.dropped", conversationId: conversation.id, data: {...prepared.dropped, policy: "drop-oldest"}});

        const {user: userMessage, reply} = this.store.appendTurn(conversation.id, input.text, {route: "local", routeReason});
        callbacks.onStarted?.({userMessageId: userMessage.id, assistantMessageId: reply.id});

        let text = "";
        let generated = 0;
        let lastSave = 0;
        const started = performance.now();
        try {
            const result = await this.engine.runTurn({
                ...turnInput,
                signal: callbacks.signal,
                onPrefill: callbacks.onPrefill,
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

    private async _sendCloud(
        conversationId: ConversationId,
        settings: ConversationSettings,
        history: Array<{role: "user" | "assistant", content: string}>,
        input: SendMessageInput,
        routeReason: string,
        callbacks: SendMessageCallbacks
    ): Promise<LocalTurnResult> {
        const cloud = this.cloudSettings();
        const client = new CloudClient({
            baseURL: cloud.endpoint!, model: cloud.model!, contextLimit: cloud.contextLimit,
            apiKey: (await this._cloud.apiKey?.(cloud.endpoint!)) ?? null
        }, {tokenizers: this._cloudTokenizers, ...this._cloud.clientOptions});
        const maxTokens = input.maxTokens ?? settings.sampling.maxTokens;
        const messages: CloudChatMessage[] = [
            ...(settings.systemPrompt.trim() !== "" ? [{role: "system" as const, content: settings.systemPrompt}] : []),
            ...history.map((turn) => ({role: turn.role, content: turn.content})),
            {role: "user", content: input.text}
        ];

        // Fingerprints of the user's other conversations: their text must never come back here.
        const fingerprints = new FingerprintIndex({key: await this._fingerprintKey()});
        for (const other of this.store.list())
            if (other.id !== conversationId)
                fingerprints.addConversation(this.store.messages(other.id).map((message) => message.content));
        const requestId = crypto.randomUUID();

        const {user: userMessage, reply} = this.store.appendTurn(conversationId, input.text, {route: "cloud", routeReason});
        callbacks.onStarted?.({userMessageId: userMessage.id, assistantMessageId: reply.id});

        let text = "";
        let lastSave = 0;
        const started = performance.now();
        let firstTokenMs: number | null = null;
        let result;
        try {
            result = await runGuardedCloudTurn({
                client,
                ledger: this._canaries,
                conversationId,
                requestId,
                messages,
                maxTokens,
                fingerprints: fingerprints.excluding(messages.map((message) => message.content)),
                charsPerCanary: this._cloud.charsPerCanary,
                holdBackChars: this._cloud.holdBackChars,
                signal: callbacks.signal,
                onText: (piece) => {
                    firstTokenMs ??= performance.now() - started;
                    text += piece;
                    const now = performance.now();
                    if (now - lastSave >= this._streamSaveIntervalMs) {
                        lastSave = now;
                        this.store.updateMessageContent(reply.id, text, 0);
                    }
                    callbacks.onText?.(piece);
                }
            });
        } catch (error) {
            // A failed cloud turn leaves the conversation as it was: nothing half-written is kept as a reply.
            this.store.deleteMessage(reply.id);
            this.store.deleteMessage(userMessage.id);
            const wire = error instanceof CleanroomError ? error : new CleanroomError("CLOUD_REQUEST_FAILED", String(error));
            this.audit.record({kind: "cloud.failed", conversationId, data: {requestId, code: wire.code, message: wire.message}});
            throw wire;
        }

        const status = result.blocked ? "blocked" : "complete";
        this.store.finishMessage(reply.id, {content: result.text, status, tokens: result.completionTokens, verdict: result.verdict});
        this.audit.record({kind: "turn.cloud", conversationId, data: {
            requestId, routeReason, canariesPlanted: result.canariesPlanted, blocked: result.blocked,
            verdict: result.verdict?.kind ?? null, promptTokensOurs: result.promptTokens.ours,
            promptTokensReported: result.promptTokens.reported, model: result.model, finishReason: result.finishReason
        }});
        if (result.blocked)
            this.audit.record({kind: "cloud.blocked", conversationId, data: {requestId, verdict: result.verdict}});
        else if (result.verdict != null)
            this.audit.record({kind: "cloud.flagged", conversationId, data: {requestId, verdict: result.verdict}});
        for (const warning of result.warnings)
            this.audit.record({kind: "cloud.warning", conversationId, data: {requestId, warning}});

        return {
            conversationId,
            route: "cloud",
            routeReason,
            userMessageId: userMessage.id,
            assistantMessageId: reply.id,
            reply: result.text,
            status,
            tokens: {prompt: result.promptTokens.ours, evaluated: 0, reused: 0, generated: result.completionTokens ?? 0},
            finishReason: "stop",
            history: {droppedMessages: 0, droppedTokens: 0},
            isolation: null,
            timings: {firstTokenMs, totalMs: performance.now() - started, tokensPerSecond: null},
            cloud: {
                requestId, blocked: result.blocked, verdict: result.verdict, warnings: result.warnings,
                canariesPlanted: result.canariesPlanted, promptTokens: result.promptTokens, model: result.model,
                finishReason: result.finishReason
            }
        };
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
            cloud: {
                canariesPlanted: this._canaries.count(conversationId),
                checksPassed: events.filter((event) => event.kind === "turn.cloud" && event.data.blocked === false && event.data.verdict == null).length,
                blocked: events.filter((event) => event.kind === "cloud.blocked").length,
                flagged: events.filter((event) => event.kind === "cloud.flagged").length
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
        this.store.purger.close();
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
        reason: end.reason,
        layoutSource: end.layoutSource
    };
}

import {AsyncDisposeAggregator, EventRelay} from "lifecycle-utils";
import type {Llama} from "node-llama-cpp";
import {catchScrubFault} from "../common/catchScrubFault.js";
import {CleanroomError, ContextOverflowError} from "../common/errors.js";
import {compareListOrder, mostRecentlyActive} from "../common/conversationOrder.js";
import type {SecretVault} from "../common/secrets.js";
import type {
    AuditEvent, Conversation, ConversationId, ConversationPolicy, ConversationSettings, ConversationSummary,
    CloudTurnResult, LocalTurnResult, Message, ScrubReport, SearchHit, SessionEndReason, TurnOutcome
} from "../common/types.js";
import type {AuditDataOf, AuditEventOf, AuditKind} from "../common/api/auditEvents.js";
import type {BackgroundScrubFault} from "../common/api/events.js";
import type {ExportFormat, IsolationReport, ModelLoadStep} from "../common/api/types.js";
import type {AuditQuery} from "./audit/AuditLog.js";
import type {LoadedModelInfo} from "./engine/LocalEngine.js";
import {toScrubReport} from "./engine/toScrubReport.js";
import {createCoreServices, type CoreOptions, type CoreServices} from "./createCoreServices.js";
import type {ConversationServices} from "./createConversationServices.js";
import type {ConversationRouter} from "./ConversationRouter.js";
import {buildIsolationReport} from "./buildIsolationReport.js";
import {lastScrubOf} from "./audit/lastScrub.js";
import {chooseRoute} from "./routing/chooseRoute.js";
import {AppSettingsStore} from "./settings/AppSettingsStore.js";
import {settingKeys} from "./settings/settingKeys.js";
import type {CloudSettings} from "./settings/CloudSettingsStore.js";
import type {NewConversation} from "./database/ConversationStore.js";
import {
    conversationsToJson, conversationsToMarkdown, exportFileName, exportMimeTypes, exportedConversation
} from "./database/conversationExport.js";
import type {PurgeState} from "./database/DeletionPurger.js";
import {DatabaseLock} from "./database/lock/DatabaseLock.js";
import {deleteEveryRow, wipeOpenDatabase, type WipeReport} from "./database/wipeStore.js";
import {CloudAttachmentsNotSentError} from "./documents/CloudAttachmentsNotSentError.js";
import {userTurnWithDocuments} from "./documents/documentPrompt.js";
import {readDocumentOf, type AttachmentWithText} from "./documents/AttachmentStore.js";
import type {CitedDocument, CitedPassage} from "../common/api/documentSchemas.js";
import type {DocumentSource, ExtractedDocument} from "./documents/extraction/types.js";
import type {SendMessageCallbacks, SendMessageInput, TurnRequest} from "./turns/types.js";
import {ApiRequestService, type ApiRequestInput, type ApiRequestResult, type ApiRunCallbacks, type PreparedApiRequest} from "./turns/ApiRequestService.js";
import {ApiEmbeddingService, type ApiEmbeddingInput, type ApiEmbeddingResult} from "./turns/ApiEmbeddingService.js";
import {ApiKeyStore} from "./database/ApiKeyStore.js";
import type {ApiSession} from "../common/api/apiServerSchemas.js";
import {buildApiSessions} from "./serving/buildApiSessions.js";

export type {CoreOptions, CoreServices} from "./createCoreServices.js";
export type {CloudAccess} from "./turns/CloudTurnService.js";
export type {CloudSettings} from "./settings/CloudSettingsStore.js";
export type {SendMessageCallbacks, SendMessageInput} from "./turns/types.js";
export type {ApiAnswer, ApiMessage, ApiRequestInput, ApiRequestResult, ApiRunCallbacks, PreparedApiRequest} from "./turns/ApiRequestService.js";
export {toScrubReport} from "./engine/toScrubReport.js";


const deletionRetryMs = 100;

/**
 * The facade over the core's services (conversations in SQLite, the local engine, the local and
 * cloud turn services, the audit log). It delegates: the work lives in the services it holds,
 * which nothing outside it reaches. The front ends' door is the zod-validated service built on
 * it (`createCoreService`); the CLI, which runs in this process and is validated by its own option
 * schemas, calls these methods directly.
 */
export class Core {
    private readonly _services: CoreServices;
    private readonly _router: ConversationRouter<ConversationServices>;
    private readonly _apiRequests: ApiRequestService;
    private readonly _apiEmbeddings: ApiEmbeddingService;
    private _apiKeys: ApiKeyStore | undefined;
    private readonly _teardown = new AsyncDisposeAggregator();

    /** Takes ownership of `services` (closing the core closes their database). Front ends use `Core.create`. */
    public constructor(services: CoreServices) {
        this._services = services;
        this._router = services.router;
        this._apiRequests = new ApiRequestService(services.engine, services.audit);
        this._apiEmbeddings = new ApiEmbeddingService(services.embeddings, services.audit);
        // The teardown, in the order it must run: the embedding model freed, sessions ended (scrubbed) and the model unloaded, then the database closed.
        this._teardown.add(() => services.embeddings.unload());
        this._teardown.add(() => services.engine.dispose());
        this._teardown.add(() => services.store.purger.dispose());
        this._teardown.add(() => services.incognito.store.purger.dispose());
        this._teardown.add(() => void services.database.close());
        this._teardown.add(() => void services.incognito.database.close());
    }

    /** A core on its database; `llama` may be a function, called when the first model loads. */
    public static create(llama: Llama | (() => Promise<Llama>), options: CoreOptions) {
        return new Core(createCoreServices(llama, options));
    }

    /** Loads the model; `onStep` hears each step of the load as it begins. */
    public async loadModel(modelPath: string, onStep?: (step: ModelLoadStep) => void): Promise<LoadedModelInfo> {
        const {engine} = this._services;
        return await engine.loadModel(modelPath, onStep);
    }

    /** The native backend this core's model loads use (`engine.status`). */
    public llama(): Promise<Llama> {
        return this._services.engine.llama();
    }

    /** The loaded model, or null. */
    public modelInfo(): LoadedModelInfo | null {
        return this._services.engine.info;
    }

    /** Tokens of a text in the loaded model's vocabulary (MODEL_NOT_LOADED without one). */
    public countTokens(text: string): number {
        return this._services.engine.countTokens(text);
    }

    public cloudSettings(): CloudSettings {
        return this._services.cloudSettings.get();
    }

    public setCloudSettings(changes: Partial<CloudSettings>): CloudSettings {
        return this._services.cloudSettings.set(changes);
    }

    /** The user-facing app settings over this core's settings, the cloud key kept in `vault`. */
    public openAppSettings(vault: SecretVault): AppSettingsStore {
        return new AppSettingsStore(this._services.settings, vault);
    }

    /** A new conversation; `incognito`: held in memory only, never written to disk, gone when the core closes. */
    public createConversation({incognito = false, ...input}: NewConversation & {incognito?: boolean} = {}): Conversation {
        const {store, audit} = this._router.setFor({incognito});
        const conversation = store.create(input);
        if (incognito)
            this._router.registerIncognito(conversation.id);
        audit.record({kind: "conversation.created", conversationId: conversation.id, data: {policy: conversation.policy}});
        return conversation;
    }

    /**
     * The conversation active last (stored or incognito, pinned or not), or, when there is none (the
     * trash aside), a new one. Synchronous: no other call can come between the look and the create.
     */
    public latestOrNewConversation(): Conversation {
        const latest = mostRecentlyActive(this.listConversations());
        return latest != null ? this.requireConversation(latest.id) : this.createConversation();
    }

    /** The conversation; CONVERSATION_NOT_FOUND when there is none with this id. */
    public requireConversation(conversationId: ConversationId): Conversation {
        return this._router.servicesOf(conversationId).store.get(conversationId);
    }

    /** The conversation, or undefined when there is none with this id. */
    public findConversation(conversationId: ConversationId): Conversation | undefined {
        return this._router.servicesOf(conversationId).store.find(conversationId);
    }

    /** Every conversation, incognito ones with the stored: pinned first, then the most recently updated. */
    public listConversations(): ConversationSummary[] {
        return [...this._services.incognito.store.list(), ...this._services.store.list()]
            .sort(compareListOrder);
    }

    /** Conversations whose title or message text holds every word of `text` (full-text search inside the encrypted database). */
    public searchConversations(text: string, limit?: number): SearchHit[] {
        const hits = [...this._services.incognito.store.search(text, limit), ...this._services.store.search(text, limit)]
            .sort((a, b) => compareListOrder(a.conversation, b.conversation));
        return hits.slice(0, limit);
    }

    /** CONVERSATION_NOT_FOUND when there is none with this id. */
    public getConversation(conversationId: ConversationId): {conversation: Conversation, messages: Message[]} {
        const {store} = this._router.servicesOf(conversationId);
        return {conversation: store.get(conversationId), messages: store.messages(conversationId)};
    }

    /** The composer's unsent text of the conversation ("" when none). */
    public draftOf(conversationId: ConversationId): string {
        return this._router.servicesOf(conversationId).store.draft(conversationId);
    }

    /** Keeps the composer's unsent text of the conversation; "" removes it. */
    public saveDraft(conversationId: ConversationId, text: string): void {
        this._router.servicesOf(conversationId).store.setDraft(conversationId, text);
    }

    public pinConversation(conversationId: ConversationId, pinned: boolean): Conversation {
        return this._router.servicesOf(conversationId).store.setPinned(conversationId, pinned);
    }

    /**
     * A deletion that can be undone: the session ends (scrubbed, verified) and the conversation leaves
     * the list, kept with its id until `deleteConversation` or `deleteTrashed`; `restoreConversation` undoes it.
     */
    public async trashConversation(conversationId: ConversationId): Promise<ScrubReport | null> {
        const {store, audit} = this._router.servicesOf(conversationId);
        const {value: scrub, fault} = await catchScrubFault(this.closeConversation(conversationId, "delete"));
        store.setTrashed(conversationId, true);
        audit.record({kind: "conversation.trashed", conversationId, data: {}});
        if (fault != null)
            throw fault;
        return scrub;
    }

    public restoreConversation(conversationId: ConversationId): Conversation {
        const {store, audit} = this._router.servicesOf(conversationId);
        store.setTrashed(conversationId, false);
        audit.record({kind: "conversation.restored", conversationId, data: {}});
        return store.get(conversationId);
    }

    /** Deletes every conversation left in the trash (by a window closed before its undo ran out): at the core's start. */
    public async deleteTrashed(): Promise<number> {
        const ids = this._services.store.trashed();
        for (const id of ids)
            await this.deleteConversation(id).catch(() => undefined);
        return ids.length;
    }

    /** One conversation, or every one in the list, as Markdown or as JSON (`importConversations` reads it back). */
    public exportConversations(conversationId: ConversationId | undefined, format: ExportFormat) {
        const conversations = conversationId != null ? [this.requireConversation(conversationId)] : this.listConversations();
        const exported = conversations.map((conversation) => {
            const {store, attachments} = this._router.servicesOf(conversation.id);
            return exportedConversation(conversation, store.messages(conversation.id), attachments.ofConversation(conversation.id));
        });
        return {
            fileName: exportFileName(conversationId != null ? conversations[0]!.title : null, format),
            mimeType: exportMimeTypes[format],
            text: format === "json" ? conversationsToJson(exported) : conversationsToMarkdown(exported)
        };
    }

    /** Adds the conversations of a JSON export as new conversations (new ids), in one transaction. */
    public async importConversations(text: string): Promise<Conversation[]> {
        const {store, audit, database, attachments} = this._services;
        const {parseConversationExport} = await import("./database/parseConversationExport.js");
        const file = parseConversationExport(text);
        const imported = database.transaction(() => file.conversations.map((exported) => {
            const conversation = store.create({title: exported.title, policy: exported.policy});
            for (const message of exported.messages) {
                const appended = store.appendMessage(conversation.id, {
                    role: message.role, content: message.content,
                    status: message.status === "streaming" ? "interrupted" : message.status,
                    route: message.route ?? null, tokens: message.tokens ?? null
                });
                for (const {pages, tokens, mode, ...document} of message.attachments ?? [])
                    attachments.add(conversation.id, appended.id, {
                        document: {...document, pages: pages.map((pageText, index) => ({page: index + 1, text: pageText}))}, tokens, mode
                    });
            }
            return exported.pinned === true ? store.setPinned(conversation.id, true) : store.get(conversation.id);
        }))();
        for (const conversation of imported)
            audit.record({kind: "conversation.imported", conversationId: conversation.id, data: {}});
        return imported;
    }

    /** Takes `messageId` (a prompt) and what follows off the shown branch, kept; returns their ids for `restoreBranch`. */
    public branchBefore(conversationId: ConversationId, messageId: number): number[] {
        const {store} = this._router.servicesOf(conversationId);
        const message = store.getMessage(messageId, conversationId);
        if (message.role !== "user")
            throw new CleanroomError("INVALID_INPUT", "Only a prompt can be edited and resent.", {conversationId, messageId});
        return store.branchBefore(messageId);
    }

    /** Puts messages taken off by `branchBefore` back (an edit refused before it started). */
    public restoreBranch(conversationId: ConversationId, ids: number[]): void {
        this._router.servicesOf(conversationId).store.restoreBranch(ids);
    }

    /** Shows another version of a message an edit kept, and returns the shown branch. */
    public showVersion(conversationId: ConversationId, messageId: number): Message[] {
        const {store} = this._router.servicesOf(conversationId);
        store.getMessage(messageId, conversationId);
        store.showVersion(messageId);
        return store.messages(conversationId);
    }

    public updateConversation(conversationId: ConversationId, changes: {title?: string, policy?: ConversationPolicy, settings?: Partial<ConversationSettings>}) {
        const {store, audit} = this._router.servicesOf(conversationId);
        const updated = store.update(conversationId, changes);
        if (changes.policy != null)
            audit.record({kind: "conversation.policy", conversationId, data: {policy: changes.policy}});
        return updated;
    }

    /**
     * Ends the conversation's session (scrubbing its context) and returns the scrub report; null when
     * no context was open. `ScrubUnverifiedError` when the scrub could not be verified (the context is discarded).
     */
    public async closeConversation(conversationId: ConversationId, reason: SessionEndReason = "close"): Promise<ScrubReport | null> {
        this.requireConversation(conversationId);
        const end = await this._services.engine.endSession(conversationId, reason);
        return end == null ? null : toScrubReport(end);
    }

    /**
     * Scrubs the conversation's context, then deletes it with its messages and audit trail.
     * `purge: "pending"`: another connection's read snapshot keeps the deleted text in the database
     * file and WAL; the store's purger finishes the purge once that reader is done (on a timer, at
     * the next write, at close) and records `deletion.purged`.
     */
    /**
     * "Delete everything" while the core keeps running: every session ends (scrubbed, verified),
     * then `wipeOpenDatabase` removes every conversation, message, draft, audit event, fingerprint,
     * canary hash and setting, leaves none of their text in the database file or its WAL, and
     * removes the registered-model records of `modelsDir` (never model files). Nothing is recorded
     * afterwards (an audit row would be the first trace again). A scrub that cannot be verified
     * does not stop the wipe: the contexts are discarded, the rows deleted, then the fault thrown.
     * Refused (`DATABASE_IN_USE`), nothing changed, while another process has the database open.
     */
    public async deleteEverything(modelsDir?: string): Promise<{scrubs: ScrubReport[], wipe: WipeReport}> {
        const {database} = this._services;
        // The database to this process alone from before the first session ends, so that a refusal changes nothing.
        return database.name === ":memory:"
            ? await this._deleteEverything(modelsDir)
            : await DatabaseLock.of(database.name).exclusivelyAsync("delete everything in", () => this._deleteEverything(modelsDir));
    }

    private async _deleteEverything(modelsDir?: string): Promise<{scrubs: ScrubReport[], wipe: WipeReport}> {
        const {engine, database, store, incognito} = this._services;
        const {value: ends, fault} = await catchScrubFault(engine.endAllSessions("delete"));
        deleteEveryRow(incognito.database);
        this._router.unregisterAllIncognito();
        const wipe = wipeOpenDatabase({db: database, purger: store.purger, modelsDir});
        if (fault != null)
            throw fault;
        return {scrubs: (ends ?? []).map(toScrubReport), wipe};
    }

    public async deleteConversation(conversationId: ConversationId): Promise<{scrub: ScrubReport | null, purge: PurgeState}> {
        const {deletionGraceMs} = this._services;
        const {store, audit} = this._router.servicesOf(conversationId);
        // A scrub that cannot be verified does not stop the deletion: the context is discarded, the text deleted, then the fault thrown.
        const {value: scrub, fault} = await catchScrubFault(this.closeConversation(conversationId, "delete"));
        let {purge} = store.delete(conversationId);
        this._router.unregister(conversationId);
        // A reader just finishing its snapshot: give it a moment before answering "pending".
        for (let waited = 0; purge === "pending" && waited < deletionGraceMs; waited += deletionRetryMs) {
            await new Promise((resolve) => setTimeout(resolve, deletionRetryMs));
            purge = store.purger.tryPurge("deletion") ?? "done";
        }
        audit.record({kind: "conversation.deleted", data: {scrubVerified: fault != null ? false : scrub?.verified ?? null, purge}});
        if (fault != null)
            throw fault;
        return {scrub, purge};
    }

    /**
     * One turn, local or cloud (`chooseRoute` decides). The prompt is checked against the local
     * context before anything is stored or evaluated; a refusal is recorded.
     */
    public async sendMessage(input: SendMessageInput & {route: "local"}, callbacks?: SendMessageCallbacks): Promise<LocalTurnResult>;
    public async sendMessage(input: SendMessageInput & {route: "cloud"}, callbacks?: SendMessageCallbacks): Promise<CloudTurnResult>;
    public async sendMessage(input: SendMessageInput, callbacks?: SendMessageCallbacks): Promise<TurnOutcome>;
    public async sendMessage(input: SendMessageInput, callbacks: SendMessageCallbacks = {}): Promise<TurnOutcome> {
        const services = this._router.servicesOf(input.conversationId);
        const conversation = services.store.get(input.conversationId);
        const attached = [...input.readAttachments ?? [], ...await extractAttachments(input.attachments)];
        // A message's documents that went in whole go in again with it, as the model was first given them.
        const wholeBlocks = services.attachments.wholeBlocksByMessage(conversation.id);
        const history = services.store.messages(conversation.id)
            .filter((message) => message.status === "complete" || (message.status === "interrupted" && message.content !== ""))
            .map((message) => ({role: message.role, content: userTurnWithDocuments(message.content, wholeBlocks.get(message.id) ?? [])}));
        return await this._turn(services, conversation, history, input, callbacks, undefined, attached);
    }

    /**
     * The first turn of a new conversation, which is created (as `createConversation` creates it)
     * only once the turn is accepted: a refused turn leaves no conversation, title or message, and
     * its refusal is recorded without one.
     */
    public async startConversation(conversation: NewConversation & {incognito?: boolean}, input: Omit<SendMessageInput, "conversationId">,
        callbacks: SendMessageCallbacks = {}): Promise<TurnOutcome> {
        const {incognito = false, ...fields} = conversation;
        const services = this._router.setFor({incognito});
        const preview = services.store.preview(fields);
        const attached = await extractAttachments(input.attachments);
        const create = () => this.createConversation({...fields, id: preview.id, incognito});
        return await this._turn(services, preview, [], input, callbacks, create, attached);
    }

    /** A turn on `conversation`, which `create` stores once the turn is accepted when it is not stored yet. */
    private async _turn(services: ConversationServices, conversation: Conversation, history: TurnRequest["history"], input: Omit<SendMessageInput, "conversationId">,
        callbacks: SendMessageCallbacks, create?: () => Conversation, attached: ExtractedDocument[] = []): Promise<TurnOutcome> {
        const {audit, localTurns, cloudTurns} = services;
        const turn: TurnRequest = {
            conversation, history, text: input.text, maxTokens: input.maxTokens, temperature: input.temperature, seed: input.seed, secrets: input.secrets,
            attachments: attached
        };
        const local = await localTurns.prepare(turn);
        const cloud = this._services.cloudSettings.get();
        let decision;
        try {
            decision = chooseRoute({
                policy: conversation.policy,
                cloudFallback: cloud.fallback,
                cloudConfigured: cloud.endpoint != null && cloud.model != null,
                requested: input.route ?? "auto",
                localProblem: local.problem
            });
        } catch (error) {
            if (error instanceof ContextOverflowError)
                audit.record({kind: "turn.refused", conversationId: create == null ? conversation.id : null, data: error.overflow});
            throw error;
        }
        if (decision.route === "cloud") {
            const documents = [
                // Earlier documents given whole are in the history a cloud turn sends; retrieved ones stay here.
                ...create == null ? services.attachments.ofConversation(conversation.id).filter((document) => document.mode === "whole") : [],
                ...attached.map((document) => ({name: document.name, bytes: document.bytes}))
            ];
            if (documents.length > 0 && input.sendAttachments !== true)
                throw new CloudAttachmentsNotSentError(documents);
            return await cloudTurns.run(turn, decision.reason, callbacks, create == null ? undefined : () => void create());
        }
        const accepted = create == null ? turn : {...turn, conversation: create()};
        return await localTurns.run(accepted, local.prepared!, decision.reason, callbacks);
    }

    /**
     * An API request of the local server (`cleanroom serve`), checked against the context before
     * anything is evaluated: `CONTEXT_OVERFLOW` (recorded) when its prompt and reply budget do not fit,
     * `INVALID_INPUT` for a JSON schema that cannot be followed.
     */
    public async prepareApiRequest(input: ApiRequestInput): Promise<PreparedApiRequest> {
        return await this._apiRequests.prepare(input);
    }

    /** Runs a prepared API request in a context of its own, ended (scrubbed and verified) with it; `onAnswered` hears the reply before that scrub. */
    public async runApiRequest(request: PreparedApiRequest, callbacks: ApiRunCallbacks = {}): Promise<ApiRequestResult> {
        return await this._countingApiRequest(() => this._apiRequests.run(request, callbacks));
    }

    /**
     * `POST /v1/embeddings` of the local API server: the texts embedded by the chosen embedding model in
     * an embedding context of their own, scrubbed before this returns. `CONTEXT_OVERFLOW` (recorded) for a
     * text longer than the model reads whole, `MODEL_NOT_LOADED` when no embedding model is chosen.
     */
    public async embedForApi(input: ApiEmbeddingInput): Promise<ApiEmbeddingResult> {
        return await this._countingApiRequest(() => this._apiEmbeddings.embed(input));
    }

    /** The name the API server lists the embedding model under; null when none is chosen. */
    public get apiEmbeddingModelName(): string | null {
        return this._apiEmbeddings.modelName;
    }

    /** Uses this embedding model in this process, whatever the stored choice (`cleanroom serve --embedding-model`); returns its absolute path. */
    public useEmbeddingModel(modelPath: string): string {
        return this._services.embeddings.override(modelPath);
    }

    /** Scrubs every `cache_salt` reuse cache of the API server now (it is stopping). */
    public async endApiCaches(): Promise<void> {
        await this._apiRequests.endCaches();
    }

    /**
     * Revokes an API key: refused from the server's next request on, and its `cache_salt` caches
     * scrubbed now (a key made later, even under the same label, is another tenant and never had them).
     */
    public async revokeApiKey(id: string): Promise<boolean> {
        const revoked = this.apiKeys.revoke(id);
        if (revoked)
            await this._apiRequests.endCaches(id);
        return revoked;
    }

    /** Hears each `cache_salt` reuse cache of the API server end (idle, or at shutdown), with its scrub. */
    public get onApiCacheEnd() {
        return this._apiRequests.onCacheEnd;
    }

    /** The local API server's keys, stored hashed in the encrypted database (Settings → Local API server, `cleanroom serve` without `--api-key`). */
    public get apiKeys(): ApiKeyStore {
        return this._apiKeys ??= new ApiKeyStore(this._services.database, this._services.audit);
    }

    /** The port the app's local API server was last started on; null: never started. */
    public savedApiPort(): number | null {
        return this._services.settings.get<number>(settingKeys.apiServer.port) ?? null;
    }

    public saveApiPort(port: number): void {
        this._services.settings.set(settingKeys.apiServer.port, port);
    }

    /** Whether the user last turned the app's local API server on (then it starts with the app); false: off, or never turned on. */
    public savedApiServerOn(): boolean {
        return this._services.settings.get<boolean>(settingKeys.apiServer.on) ?? false;
    }

    public saveApiServerOn(on: boolean): void {
        this._services.settings.set(settingKeys.apiServer.on, on);
    }

    /** The local API server's newest requests, newest first, with their tenant, context and scrub (the Isolation panel's list). */
    public apiSessions(limit?: number): ApiSession[] {
        return buildApiSessions(this._services.audit, limit);
    }

    /**
     * Removes the conversation's last prompt and everything after it (for a regenerate), and
     * returns the prompt's text and the removed messages (`restoreMessages` puts them back).
     */
    public rewindToLastPrompt(conversationId: ConversationId, data: Omit<AuditDataOf<"reply.regenerated">, "removedMessages"> = {}): {prompt: string, removed: Message[], documents: AttachmentWithText[]} {
        const {store, audit, attachments} = this._router.servicesOf(conversationId);
        const messages = store.messages(store.get(conversationId).id);
        const lastPromptIndex = messages.findLastIndex((message) => message.role === "user");
        const lastPrompt = messages[lastPromptIndex];
        if (lastPrompt == null)
            throw new CleanroomError("INVALID_INPUT", "There is no reply to regenerate in this conversation yet.", {conversationId});

        const removed = messages.slice(lastPromptIndex);
        // The prompt's documents go with it (their rows with its message), and come back with it: asked again, or restored.
        const documents = attachments.ofMessage(conversationId, lastPrompt.id);
        for (const message of removed)
            store.deleteMessage(message.id);
        audit.record({kind: "reply.regenerated", conversationId, data: {removedMessages: removed.length, ...data}});
        return {prompt: lastPrompt.content, removed, documents};
    }

    /** The documents stored with the message `messageId`, with their text. */
    public documentsOfMessage(conversationId: ConversationId, messageId: number): AttachmentWithText[] {
        return this._router.servicesOf(conversationId).attachments.ofMessage(conversationId, messageId);
    }

    /** Appends `messages` again, as new messages with their content, status, route and verdict, and `documents` with the message they belonged to. */
    public restoreMessages(conversationId: ConversationId, messages: Message[], documents: readonly AttachmentWithText[] = []) {
        const {store, attachments} = this._router.servicesOf(conversationId);
        for (const message of messages) {
            const restored = store.appendMessage(conversationId, {
                role: message.role, content: message.content, status: message.status,
                route: message.route, routeReason: message.routeReason, tokens: message.tokens
            });
            for (const document of documents.filter((stored) => stored.messageId === message.id))
                attachments.add(conversationId, restored.id, {document: readDocumentOf(document), tokens: document.tokens, mode: document.mode});
            if (message.verdict != null)
                store.finishMessage(restored.id, {content: message.content, status: message.status, verdict: message.verdict});
        }
    }

    /** The audit trail, oldest first: the newest `limit` events (default 500), of one conversation and of some kinds when asked. */
    public auditEvents<Kind extends AuditKind>(query: AuditQuery<Kind> & {kinds: Kind[]}): Array<AuditEventOf<Kind>>;
    public auditEvents(query?: AuditQuery): AuditEvent[];
    public auditEvents(query: AuditQuery = {}): AuditEvent[] {
        return this._router.auditOf(query.conversationId ?? null).events(query);
    }

    /** A session that ended with no call waiting for it could not be verified scrubbed (incognito ones too); dispose the handle to stop listening. */
    /** The number of API requests being run (completions and embeddings, until their scrub), each time it changes. */
    public readonly onApiActivity = new EventRelay<number>();
    private _apiRequestsInFlight = 0;

    private async _countingApiRequest<T>(work: () => Promise<T>): Promise<T> {
        this.onApiActivity.dispatchEvent(++this._apiRequestsInFlight);
        try {
            return await work();
        } finally {
            this.onApiActivity.dispatchEvent(--this._apiRequestsInFlight);
        }
    }

    public onBackgroundScrubFault(listener: (fault: BackgroundScrubFault) => void): Disposable & {dispose(): void} {
        const handle = this._services.engine.onBackgroundScrubFault.createListener(listener);
        const dispose = () => handle.dispose();
        return {dispose, [Symbol.dispose]: dispose};
    }

    /** Every audit event as it is recorded, incognito conversations' too; dispose the handle to stop listening. */
    public onAuditEvent(listener: (event: AuditEvent) => void): Disposable & {dispose(): void} {
        const handles = this._router.sets().map(({audit}) => audit.onEvent.createListener(listener));
        const dispose = () => handles.forEach((handle) => handle.dispose());
        return {dispose, [Symbol.dispose]: dispose};
    }

    /** A passage of the conversation's documents (#23 item 4); PASSAGE_NOT_FOUND for one of another conversation. */
    public citedPassage(conversationId: ConversationId, chunkId: number): CitedPassage {
        const services = this._router.servicesOf(conversationId);
        services.store.get(conversationId);
        return services.replySources.passage(conversationId, chunkId);
    }

    /** A document of the conversation, page by page (#23 item 4); PASSAGE_NOT_FOUND for one of another conversation. */
    public citedDocument(conversationId: ConversationId, attachmentId: number): CitedDocument {
        const services = this._router.servicesOf(conversationId);
        services.store.get(conversationId);
        return services.replySources.document(conversationId, attachmentId);
    }

    /** What the Isolation panel shows: the live context, the last scrub, counters, each turn's route, the audit trail. */
    public isolationReport(conversationId: ConversationId): IsolationReport {
        const services = this._router.servicesOf(conversationId);
        services.store.get(conversationId);
        return buildIsolationReport(conversationId, services, this._services.engine.liveContext(conversationId));
    }

    /** The last scrub of the conversation's own context recorded at or after `since` (ms; defaults to any time), from its audit trail. */
    public lastScrubReport(conversationId: ConversationId, since?: number): ScrubReport | null {
        return lastScrubOf(this._router.auditOf(conversationId), conversationId, {ownContext: true, since});
    }

    /** Ends every session (each scrubbed), unloads the model and closes the database. Runs once; a second call waits for the first. */
    public dispose(): Promise<void> {
        return this._teardown.dispose();
    }

    /** So that callers can write `await using core = Core.create(…)`. */
    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }
}

/** Reads each document a turn brings, before anything is stored or evaluated: the first unreadable one is thrown (ATTACHMENT_UNREADABLE). */
async function extractAttachments(sources: readonly DocumentSource[] = []): Promise<ExtractedDocument[]> {
    if (sources.length === 0)
        return [];
    // Loaded by the first turn that brings a document: a turn without one never parses the readers' code (#25 item 1).
    const {extractDocument} = await import("./documents/extraction/extractDocument.js");
    const documents: ExtractedDocument[] = [];
    for (const source of sources)
        documents.push(await extractDocument(source));
    return documents;
}

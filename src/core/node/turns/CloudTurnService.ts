import crypto from "node:crypto";
import {FingerprintIndex} from "../../common/cloud/fingerprints.js";
import {CleanroomError, SecretInCloudRequestError} from "../../common/errors.js";
import type {CloudTurnResult, ConversationId} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import type {CanaryLedger} from "../cloud/CanaryLedger.js";
import {CloudClient, type CloudChatMessage, type CloudClientOptions} from "../cloud/CloudClient.js";
import {EndpointCacheSaltSupport} from "../cloud/EndpointCacheSaltSupport.js";
import {EndpointTokenizerCache} from "../cloud/EndpointTokenizerCache.js";
import {runGuardedCloudTurn} from "../cloud/runGuardedCloudTurn.js";
import {SecretScanner} from "../cloud/secrets/SecretScanner.js";
import {countByKind, screenCloudRequest} from "../cloud/secrets/screenCloudRequest.js";
import type {CloudSettings, CloudSettingsStore} from "../settings/CloudSettingsStore.js";
import type {ConversationStore} from "../database/ConversationStore.js";
import type {AttachmentStore} from "../documents/AttachmentStore.js";
import type {ReplySources} from "../documents/ReplySources.js";
import {userTurnWithDocuments, wholeDocumentBlock} from "../documents/documentPrompt.js";
import {estimateCloudTokens} from "../cloud/estimateCloudTokens.js";
import {StreamingReply} from "./StreamingReply.js";
import type {SendMessageCallbacks, TurnRequest} from "./types.js";

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

export type CloudTurnServiceOptions = {
    store: ConversationStore,
    /** Where a turn's documents are stored with its user message (#23). */
    attachments: AttachmentStore,
    /** Where each reply's documents are recorded as sent to the endpoint (#23 item 7). */
    replySources: ReplySources,
    audit: AuditLog,
    canaries: CanaryLedger,
    settings: CloudSettingsStore,
    access: CloudAccess,
    /** How often a growing reply is written to the database. */
    streamSaveIntervalMs: number,
    /** Every store whose conversations are fingerprinted (all but the one of the turn): the core's and the incognito one. */
    fingerprintStores: () => ConversationStore[]
};

/**
 * Turns on the shared cloud, each wrapped in the canary protocol (`runGuardedCloudTurn`) with
 * fingerprints of the user's other conversations. A blocked reply keeps only its verdict; a
 * failed request leaves the conversation as it was (a first turn's: none at all).
 */
export class CloudTurnService {
    private readonly _store: ConversationStore;
    private readonly _attachments: AttachmentStore;
    private readonly _replySources: ReplySources;
    private readonly _audit: AuditLog;
    private readonly _canaries: CanaryLedger;
    private readonly _settings: CloudSettingsStore;
    private readonly _access: CloudAccess;
    private readonly _streamSaveIntervalMs: number;
    private readonly _fingerprintStores: () => ConversationStore[];
    /** Which cloud endpoints count tokens for us (`/tokenize`), learnt once per endpoint. */
    private readonly _tokenizers = new EndpointTokenizerCache();
    /** Which cloud endpoints take `cache_salt`, learnt once per endpoint. */
    private readonly _cacheSalts = new EndpointCacheSaltSupport();
    private readonly _processKey = new Uint8Array(crypto.randomBytes(32));
    private readonly _cacheSaltKey = crypto.randomBytes(32);
    /** Scans every request before it leaves (secretlint's preset and our own rules). */
    private readonly _secrets = new SecretScanner();

    public constructor({store, attachments, replySources, audit, canaries, settings, access, streamSaveIntervalMs, fingerprintStores}: CloudTurnServiceOptions) {
        this._store = store;
        this._attachments = attachments;
        this._replySources = replySources;
        this._fingerprintStores = fingerprintStores;
        this._audit = audit;
        this._canaries = canaries;
        this._settings = settings;
        this._access = access;
        this._streamSaveIntervalMs = streamSaveIntervalMs;
        // Where cloud turns are expected (the fallback on, an endpoint set), the scanner's first
        // use (loading secretlint and its rules) is paid now rather than by the first turn.
        const cloud = settings.get();
        if (cloud.fallback && cloud.endpoint != null)
            void this._secrets.warm().catch(() => undefined);
    }

    /**
     * `create` stores the conversation of a first turn (`Core.startConversation`): only once the
     * request has passed the secret scan, and it is removed again when the request fails, so a
     * refused or failed first turn leaves no conversation and no title made of its prompt.
     */
    public async run(request: TurnRequest, routeReason: string, callbacks: SendMessageCallbacks = {}, create?: () => void): Promise<CloudTurnResult> {
        const conversationId = request.conversation.id;
        // Events of a conversation that does not exist (yet, or any more) are recorded without its id, as a refused local turn's are.
        let auditedId: ConversationId | null = create == null ? conversationId : null;
        const settings = request.conversation.settings;
        const cloud = this._settings.get();
        const client = new CloudClient({
            baseURL: cloud.endpoint!, model: cloud.model!, contextLimit: cloud.contextLimit,
            apiKey: (await this._access.apiKey?.(cloud.endpoint!)) ?? null
        }, {tokenizers: this._tokenizers, cacheSalts: this._cacheSalts, ...this._access.clientOptions});
        const maxTokens = request.maxTokens ?? settings.sampling.maxTokens;
        const requestId = crypto.randomUUID();
        // The documents this turn brings go in whole (the endpoint's context limit refuses one too large, before anything is sent);
        // they were allowed to leave (`sendAttachments`, checked by the core before this turn was routed here).
        const documents = (request.attachments ?? []).map((document) => ({document, block: wholeDocumentBlock(document.name, document.pages)}));
        const userContent = userTurnWithDocuments(request.text, documents.map(({block}) => block));
        // Nothing is stored or sent before the whole request is scanned for secrets.
        const {messages, restorer, redacted, allowed} = await this._screen(auditedId, requestId, [
            ...(settings.systemPrompt.trim() !== "" ? [{role: "system" as const, content: settings.systemPrompt}] : []),
            ...request.history.map((turn) => ({role: turn.role, content: turn.content})),
            {role: "user", content: userContent}
        ], request);
        const secrets = {redacted, allowed};
        const fingerprints = await this._fingerprintsOfOthers(conversationId);
        if (create != null) {
            create();
            auditedId = conversationId;
        }

        const {user, reply: replyMessage} = this._attachments.transaction(() => {
            // The history this request carries holds the conversation's earlier documents given whole, sent again with it.
            const earlierWhole = create == null ? this._attachments.ofConversation(conversationId).filter((document) => document.mode === "whole") : [];
            const appended = this._store.appendTurn(conversationId, request.text, {route: "cloud", routeReason});
            const broughtIds = documents.map(({document, block}) =>
                this._attachments.add(conversationId, appended.user.id, {document, tokens: estimateCloudTokens(block), mode: "whole"}));
            this._replySources.record(conversationId, appended.reply.id, {route: "cloud", endpointHost: new URL(cloud.endpoint!).host}, [
                ...earlierWhole.map((document) => ({attachmentId: document.id, chunkId: null, cited: false})),
                ...broughtIds.map((attachmentId) => ({attachmentId, chunkId: null, cited: true}))
            ]);
            return appended;
        });
        callbacks.onStarted?.({userMessageId: user.id, assistantMessageId: replyMessage.id});

        const reply = new StreamingReply(this._store, replyMessage.id, this._streamSaveIntervalMs);
        const show = (text: string) => {
            if (text !== "") {
                reply.append(text, 0);
                callbacks.onText?.(text);
            }
        };
        let result;
        try {
            result = await runGuardedCloudTurn({
                client,
                ledger: this._canaries,
                conversationId,
                requestId,
                messages,
                maxTokens,
                cacheSalt: this._cacheSaltOf(conversationId),
                fingerprints: fingerprints.excluding(messages.map((message) => message.content)),
                charsPerCanary: this._access.charsPerCanary,
                holdBackChars: this._access.holdBackChars,
                signal: callbacks.signal,
                // Each piece passed the canary scan; placeholders of redacted secrets get their values back.
                onText: (piece) => show(restorer.feed(piece))
            });
            if (!result.blocked) {
                show(restorer.finish());
                result = {...result, text: restorer.restore(result.text)};
            }
        } catch (error) {
            show(restorer.finish());
            // Stopped by the user: what was shown (every piece passed the canary scan) is kept, marked interrupted.
            if (callbacks.signal?.aborted === true && reply.text !== "") {
                this._store.finishMessage(reply.messageId, {content: reply.text, status: "interrupted", tokens: reply.pieces});
                this._audit.record({kind: "turn.cloud", conversationId, data: {
                    messageId: reply.messageId, requestId, routeReason, blocked: false, verdict: null, finishReason: "aborted"
                }});
                return {
                    conversationId, route: "cloud", routeReason, userMessageId: user.id, assistantMessageId: reply.messageId,
                    reply: reply.text, status: "interrupted",
                    tokens: {prompt: 0, generated: null},
                    timings: {firstTokenMs: reply.firstPieceMs, totalMs: reply.elapsedMs()},
                    cloud: {
                        requestId, blocked: false, verdict: null, warnings: [], canariesPlanted: 0,
                        promptTokens: {ours: 0, reported: null, countedBy: "estimate"}, model: null, finishReason: "aborted", secrets
                    }
                };
            }
            // A failed cloud turn leaves the conversation as it was: nothing half-written is kept as a reply,
            // and the conversation its first turn created is gone again.
            if (create != null) {
                this._store.delete(conversationId);
                auditedId = null;
            } else {
                this._store.deleteMessage(reply.messageId);
                this._store.deleteMessage(user.id);
            }
            const wire = error instanceof CleanroomError ? error : new CleanroomError("CLOUD_REQUEST_FAILED", String(error));
            this._audit.record({kind: "cloud.failed", conversationId: auditedId, data: {requestId, code: wire.code, message: wire.message}});
            throw wire;
        }

        // Stopped by the user while it streamed: what was shown is kept, marked interrupted (text held back for the scan is not).
        const stopped = !result.blocked && callbacks.signal?.aborted === true;
        const status = result.blocked ? "blocked" : stopped ? "interrupted" : "complete";
        if (stopped)
            result = {...result, text: reply.text, finishReason: result.finishReason ?? "aborted"};
        this._store.finishMessage(reply.messageId, {content: result.text, status, tokens: result.completionTokens, verdict: result.verdict});
        this._audit.record({kind: "turn.cloud", conversationId, data: {
            messageId: reply.messageId, requestId, routeReason, canariesPlanted: result.canariesPlanted, blocked: result.blocked,
            verdict: result.verdict?.kind ?? null, promptTokensOurs: result.promptTokens.ours,
            promptTokensReported: result.promptTokens.reported, model: result.model, finishReason: result.finishReason
        }});
        if (result.blocked)
            this._audit.record({kind: "cloud.blocked", conversationId, data: {requestId, verdict: result.verdict}});
        else if (result.verdict != null)
            this._audit.record({kind: "cloud.flagged", conversationId, data: {requestId, verdict: result.verdict}});
        for (const warning of result.warnings)
            this._audit.record({kind: "cloud.warning", conversationId, data: {requestId, warning}});

        return {
            conversationId,
            route: "cloud",
            routeReason,
            userMessageId: user.id,
            assistantMessageId: reply.messageId,
            reply: result.text,
            status,
            tokens: {prompt: result.promptTokens.ours, generated: result.completionTokens},
            timings: {firstTokenMs: reply.firstPieceMs, totalMs: reply.elapsedMs()},
            cloud: {
                requestId, blocked: result.blocked, verdict: result.verdict, warnings: result.warnings,
                canariesPlanted: result.canariesPlanted, promptTokens: result.promptTokens, model: result.model,
                finishReason: result.finishReason, secrets
            }
        };
    }

    /**
     * The request as it may leave (`screenCloudRequest`): refused when it holds a secret the turn
     * neither redacts nor allows. The audit keeps kinds and counts, never a value or a place.
     */
    private async _screen(conversationId: ConversationId | null, requestId: string, messages: CloudChatMessage[], request: TurnRequest) {
        try {
            const screened = await screenCloudRequest(messages, {scanner: this._secrets, neverSend: this._settings.get().neverSend, options: request.secrets});
            if (screened.redacted.length > 0)
                this._audit.record({kind: "cloud.secrets.redacted", conversationId, data: {
                    requestId, count: screened.redacted.length, kinds: countByKind(screened.redacted)
                }});
            if (screened.allowed.length > 0)
                this._audit.record({kind: "cloud.secrets.allowed", conversationId, data: {
                    requestId, count: screened.allowed.length, kinds: countByKind(screened.allowed)
                }});
            return screened;
        } catch (error) {
            if (error instanceof SecretInCloudRequestError)
                this._audit.record({kind: "cloud.secrets.blocked", conversationId, data: {
                    requestId, count: error.findings.length, kinds: countByKind(error.findings)
                }});
            throw error;
        }
    }

    /**
     * The conversation's `cache_salt`: the same for each of its turns (a shared server may reuse its
     * own prefix), unlike any other conversation's, and unguessable (an HMAC of its id under a key of
     * this process; a restart only costs a cache miss).
     */
    private _cacheSaltOf(conversationId: ConversationId) {
        return crypto.createHmac("sha256", this._cacheSaltKey).update(conversationId).digest("base64url");
    }

    /** Fingerprints of the user's other conversations (those still undoably deleted too), their documents' text included: it must never come back in this one. */
    private async _fingerprintsOfOthers(conversationId: ConversationId) {
        const fingerprints = new FingerprintIndex({key: this._access.fingerprintKey != null ? await this._access.fingerprintKey() : this._processKey});
        for (const store of this._fingerprintStores())
            for (const other of store.list({includeTrashed: true}))
                if (other.id !== conversationId)
                    fingerprints.addConversation([...store.messages(other.id).map((message) => message.content), ...store.documentTexts(other.id)]);
        return fingerprints;
    }
}

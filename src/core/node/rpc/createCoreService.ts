import {DisposeAggregator} from "lifecycle-utils";
import {CleanroomError, InvalidInputError, toWireError} from "../../common/errors.js";
import {coreCalls, isApiMethod, type ApiMethod, type ApiOutput, type ApiParsedInput, type AppSettings, type CallResult, type GpuSetting, type ModelStatus} from "../../common/api/index.js";
import {PendingUploads} from "../documents/PendingUploads.js";
import type {SecretVault} from "../../common/secrets.js";
import type {Core} from "../Core.js";
import {ModelLibrary, type ModelLibraryOptions} from "../models/ModelLibrary.js";
import {MemorySecretVault} from "../secrets/MemorySecretVault.js";
import {LocalApiServer} from "../serving/LocalApiServer.js";
import {CoreEventEmitter} from "./CoreEventEmitter.js";
import {ModelStatusTracker} from "../models/ModelStatusTracker.js";
import {EngineBuildRunner} from "../engine/EngineBuildRunner.js";
import {TurnRunner} from "../turns/TurnRunner.js";
import {describeZodIssues} from "../../common/describeZodIssues.js";

export type CoreServiceOptions = {
    /** Where the cloud API key is kept. Defaults to process memory (`MemorySecretVault`). */
    vault?: SecretVault,
    /**
     * The engine settings the running core was started with; settings that differ are reported
     * as pending until the core restarts. Defaults to `{threads: null, contextSize: null, gpu: "auto"}`.
     */
    runningEngine?: {threads: number | null, contextSize: number | null, gpu?: GpuSetting},
    /**
     * The models folder (and catalog, and where other apps' models are looked for) behind the
     * `models.*` calls. Without it those calls answer MODELS_UNAVAILABLE, and nothing touches the disk.
     */
    models?: ModelLibraryOptions,
    /**
     * Whether `chat.send` may attach files by path (#23): the desktop app, whose window runs on this
     * machine. Web mode's clients may be elsewhere and must not name files on the server: there
     * `attachments` is refused (INVALID_INPUT). Defaults to `false`.
     */
    attachByPath?: boolean,
    /** The app's local API server (`apiServer.*`), which its host stops before the core closes. Without it those calls are refused. */
    apiServer?: LocalApiServer
};

/** One client's connection (a web mode socket): what it holds in the core (uploads) is its own. Absent: the core's own callers. */
export type ClientConnection = object;

export type CoreService = {
    /** Validates `input` against the contract, runs the handler, and returns the outcome as data. */
    call(method: string, input: unknown, connection?: ClientConnection): Promise<CallResult>,
    /** The client of `connection` is gone: its uploads are dropped. */
    disconnected?(connection: ClientConnection): void,
    readonly events: CoreEventEmitter,
    readonly models: ModelStatusTracker,
    /**
     * Stops replies in progress and detaches from the core (the core itself is disposed by its owner;
     * `LockingCoreService`, which owns its core, disposes it too and returns the promise of that).
     */
    dispose(): void
};

/**
 * The core's one door for front ends (the app over RPC, web mode over a WebSocket), on the
 * `Core` facade. Every input is checked with the contract's schema first: a refused
 * input becomes INVALID_INPUT and nothing runs. Errors leave as `WireError` data.
 */
/** The contract's handlers; those that keep something per client (uploads) also take the caller's connection. */
type ConnectionHandlers = {[M in ApiMethod]: (input: ApiParsedInput<M>, connection: ClientConnection) => Promise<ApiOutput<M>>};

export function createCoreService(core: Core, options: CoreServiceOptions = {}): CoreService {
    const events = new CoreEventEmitter();
    const settings = core.openAppSettings(options.vault ?? new MemorySecretVault());
    const runningEngine = {gpu: "auto" as GpuSetting, ...options.runningEngine ?? {threads: null, contextSize: null}};
    const turns = new TurnRunner(core, events);
    const uploads = new PendingUploads();
    // Calls without a connection (the core's own callers, in-process tests) share one owner.
    const ownCalls: ClientConnection = {};

    const pendingRestart = (current: AppSettings) => [
        ...(current.threads !== runningEngine.threads ? ["threads"] : []),
        ...(current.contextSize !== runningEngine.contextSize ? ["contextSize"] : []),
        ...(current.gpu !== runningEngine.gpu ? ["gpu"] : [])
    ];
    const emitStatus = async (model: ModelStatus) => {
        events.emit("core.status", {state: "ready", model, pendingRestart: pendingRestart(await settings.get()), message: null});
    };
    const apiServer = options.apiServer ?? new LocalApiServer(core, null);
    const models = new ModelStatusTracker(core, (status) => {
        void emitStatus(status);
        // Left on by the user: the server starts again once the app has a model to serve.
        if (status.state === "ready")
            void apiServer.startIfLeftOn();
    });
    const library = options.models != null ? new ModelLibrary(options.models, (progress) => events.emit("models.downloadProgress", progress)) : null;
    const engineBuild = new EngineBuildRunner(() => core.llama(), (progress) => events.emit("engine.buildProgress", progress));
    // What `dispose` undoes, in this order: replies stopped, downloads and an engine build cancelled, the audit and fault relays detached.
    const teardown = new DisposeAggregator();
    teardown.add(() => turns.stopAll());
    teardown.add(() => uploads.clear());
    teardown.add(() => library?.cancelAll());
    teardown.add(() => engineBuild.cancel());
    teardown.add(core.onAuditEvent((event) => events.emit("audit.event", event)));
    teardown.add(core.onBackgroundScrubFault((fault) => events.emit("scrub.backgroundFault", fault)));
    teardown.add(core.onApiActivity.createListener((requestsInFlight) => events.emit("api.activity", {requestsInFlight})));
    teardown.add(apiServer.onStatusChange.createListener((status) => events.emit("apiServer.status", status)));
    if (models.status.state === "ready")
        void apiServer.startIfLeftOn();
    // Conversations a closed window left in the trash (its undo never ran out here) are deleted now.
    void core.deleteTrashed().catch(() => undefined);
    const requireLibrary = () => {
        if (library == null)
            throw new CleanroomError("MODELS_UNAVAILABLE", "Model management is not set up in this core (no models folder was given).");
        return library;
    };

    /** `model.load`'s path: loads, and once ready remembers the path in settings (unless told not to). */
    const loadModel = async (modelPath: string, remember: boolean) => {
        const status = await models.load(modelPath);
        if (status.state === "ready" && remember)
            await settings.set({modelPath});
        return status;
    };

    const handlers: ConnectionHandlers = {
        // A core without a passphrase is never locked; with one, `LockingCoreService` answers these before they reach here.
        "app.lockState": async () => ({locked: false, passphraseSet: false, idleLockMs: null}),
        "app.unlock": async () => ({locked: false as const}),
        "app.lock": async () => {
            throw new CleanroomError("INVALID_INPUT", "No passphrase is set, so there is nothing to lock with: set one first (cleanroom passphrase set).");
        },
        "app.setPassphrase": async () => {
            throw new CleanroomError("INVALID_INPUT", "This core cannot re-key its database while it holds it open: the app and web mode can (Settings), the CLI with `cleanroom passphrase set`.");
        },
        "app.deleteEverything": async () => {
            await turns.stopAllAndWait();
            library?.cancelAll();
            const {scrubs, wipe} = await core.deleteEverything(options.models?.dir);
            library?.forgetRegistry();
            return {scrubs, ...wipe};
        },
        "conversations.list": async () => core.listConversations(),
        "conversations.search": async ({text, limit}) => core.searchConversations(text, limit),
        "conversations.create": async ({title, policy, incognito}) => core.createConversation({title, policy, incognito}),
        "conversations.latestOrNew": async () => core.latestOrNewConversation(),
        "conversations.get": async ({conversationId}) => ({
            ...core.getConversation(conversationId),
            generating: turns.isGenerating(conversationId),
            draft: core.draftOf(conversationId)
        }),
        "conversations.saveDraft": async ({conversationId, text}) => {
            core.saveDraft(conversationId, text);
            return {saved: true};
        },
        "conversations.pin": async ({conversationId, pinned}) => core.pinConversation(conversationId, pinned),
        "conversations.trash": async ({conversationId}) => {
            core.requireConversation(conversationId);
            turns.stop(conversationId);
            return {scrub: await core.trashConversation(conversationId)};
        },
        "conversations.restore": async ({conversationId}) => core.restoreConversation(conversationId),
        "conversations.export": async ({conversationId, format}) => core.exportConversations(conversationId, format),
        "conversations.import": async ({text}) => ({imported: await core.importConversations(text)}),
        "conversations.rename": async ({conversationId, title}) => core.updateConversation(conversationId, {title}),
        "conversations.setPolicy": async ({conversationId, policy}) => core.updateConversation(conversationId, {policy}),
        "conversations.close": async ({conversationId}) => ({scrub: await core.closeConversation(conversationId, "close")}),
        "conversations.delete": async ({conversationId}) => {
            core.requireConversation(conversationId);
            turns.stop(conversationId);
            return await core.deleteConversation(conversationId);
        },
        "chat.send": async ({conversationId, text, maxTokens, route, secrets, attachments, sendAttachments, uploads: uploaded = []}, connection) => {
            if (attachments != null && attachments.length > 0 && options.attachByPath !== true)
                throw new InvalidInputError("chat.send", ["attachments: files are attached by path only in the desktop app"]);
            const uploadIds = uploaded.map(({uploadId}) => uploadId);
            // Uploaded documents stay pending until the turn starts: a refused turn (a cloud turn not yet confirmed) keeps them.
            const readAttachments = uploads.documents(connection, uploadIds, "chat.send");
            const started = await turns.start(conversationId, text, {
                maxTokens, route, secrets, attachments: attachments?.map(({path}) => ({kind: "path", path})), sendAttachments,
                ...readAttachments.length > 0 ? {readAttachments} : {}
            });
            uploads.release(connection, uploadIds);
            return started;
        },
        "attachments.uploadBegin": async ({name, bytes}, connection) => ({uploadId: uploads.begin(connection, name, bytes)}),
        "attachments.uploadChunk": async ({uploadId, offset, base64}, connection) => uploads.chunk(connection, uploadId, offset, Buffer.from(base64, "base64")),
        "attachments.uploadFinish": async ({uploadId}, connection) => {
            const {name, format, bytes, pages} = await uploads.finish(connection, uploadId);
            return {uploadId, name, format, bytes, pages: pages.length};
        },
        "attachments.discard": async ({uploadId}, connection) => ({discarded: uploads.discard(connection, uploadId)}),
        "chat.stop": async ({conversationId}) => ({stopped: turns.stop(conversationId)}),
        "chat.regenerate": async ({conversationId, maxTokens, route, secrets}) => await turns.regenerate(conversationId, {maxTokens, route, secrets}),
        "chat.editAndResend": async ({conversationId, messageId, text, maxTokens, route, secrets}) =>
            await turns.editAndResend(conversationId, messageId, text, {maxTokens, route, secrets}),
        "chat.showVersion": async ({conversationId, messageId}) => {
            if (turns.isGenerating(conversationId))
                throw new InvalidInputError("chat.showVersion", ["a reply is being generated in this conversation; stop it first"]);
            return {messages: core.showVersion(conversationId, messageId)};
        },
        "documents.passage": async ({conversationId, chunkId}) => core.citedPassage(conversationId, chunkId),
        "documents.document": async ({conversationId, attachmentId}) => core.citedDocument(conversationId, attachmentId),
        "isolation.report": async ({conversationId}) => core.isolationReport(conversationId),
        "audit.events": async ({conversationId, limit}) => core.auditEvents({conversationId, limit}),
        "settings.get": async () => await settings.get(),
        "settings.set": async (changes) => {
            const updated = await settings.set(changes);
            void emitStatus(models.status);
            return updated;
        },
        "model.status": async () => models.status,
        "model.load": async ({path, remember}) => {
            const modelPath = path ?? (await settings.get()).modelPath;
            if (modelPath == null)
                throw new CleanroomError("MODEL_NOT_FOUND", "No model is set: choose a GGUF file.");

            return await loadModel(modelPath, remember !== false);
        },
        "engine.status": async () => await engineBuild.status(),
        "engine.build": async () => {
            engineBuild.start();
            return {started: true as const};
        },
        "engine.cancelBuild": async () => ({cancelled: engineBuild.cancel()}),
        "models.list": async () => await requireLibrary().list(models.status.state === "ready" ? models.status.path : null),
        "models.download": async (request) => ({id: requireLibrary().startDownload(request)}),
        "models.cancelDownload": async ({id}) => ({cancelled: requireLibrary().cancelDownload(id)}),
        "models.import": async ({path, name}) => await requireLibrary().importFile(path, name),
        "models.detect": async ({add, paths}) => await requireLibrary().detect({add, paths}),
        "models.setDefault": async ({id}) => {
            const registry = requireLibrary().registry;
            const model = registry.get(id);
            if (model == null)
                throw new CleanroomError("MODEL_NOT_FOUND", `No registered model "${id}".`, {id});

            // The default changes only once the model is running: a model that cannot load is never made the default.
            const status = await loadModel(model.path, true);
            if (status.state === "ready")
                registry.setDefault(id);
            return {defaultModelId: registry.defaultModel()?.id ?? null, status};
        },
        "apiServer.status": async () => apiServer.status(),
        "apiServer.start": async ({port}) => await apiServer.start(port),
        "apiServer.stop": async () => await apiServer.stop(),
        "apiServer.sessions": async ({limit}) => ({sessions: core.apiSessions(limit)}),
        "apiKeys.list": async () => ({keys: core.apiKeys.list()}),
        "apiKeys.create": async ({label}) => core.apiKeys.create(label),
        "apiKeys.revoke": async ({id}) => ({revoked: await core.revokeApiKey(id)})
    };

    return {
        events,
        models,
        disconnected: (connection) => uploads.discardOwner(connection),
        async call(method, input, connection = ownCalls) {
            if (!isApiMethod(method))
                return {ok: false, error: new InvalidInputError("call", [typeof method === "string"
                    ? `unknown method "${method.length > 100 ? method.slice(0, 100) + "…" : method}"`
                    : `the method name must be a string, got ${Array.isArray(method) ? "an array" : typeof method}`]).toWire()};

            const parsed = coreCalls[method].input.safeParse(input);
            if (!parsed.success) {
                return {ok: false, error: new InvalidInputError(method, describeZodIssues(parsed.error.issues)).toWire()};
            }
            try {
                const handler = handlers[method] as (input: unknown, connection: ClientConnection) => Promise<unknown>;
                return {ok: true, value: await handler(parsed.data, connection)};
            } catch (error) {
                return {ok: false, error: toWireError(error)};
            }
        },
        dispose: teardown.dispose
    };
}


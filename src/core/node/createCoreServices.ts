import type {Llama} from "node-llama-cpp";
import {defaultResumeSnapshotMaxMiB} from "../common/api/limits.js";
import {AuditLog} from "./audit/AuditLog.js";
import {ConversationRouter} from "./ConversationRouter.js";
import {LocalEngine, type LocalEngineOptions} from "./engine/LocalEngine.js";
import {createConversationServices, type ConversationServices} from "./createConversationServices.js";
import {EmbeddingModelChoice} from "./documents/embedding/EmbeddingModelChoice.js";
import {CloudSettingsStore} from "./settings/CloudSettingsStore.js";
import {settingKeys} from "./settings/settingKeys.js";
import type {DeletionPurgerOptions} from "./database/DeletionPurger.js";
import {SettingsStore} from "./settings/SettingsStore.js";
import type {StoreKeySource} from "./database/keys/types.js";
import {openDatabase} from "./database/openDatabase.js";
import {KvResume} from "./resume/KvResume.js";
import type {CloudAccess} from "./turns/CloudTurnService.js";

export type CoreOptions = {
    /** SQLite file, or ":memory:" (nothing written to disk: incognito). */
    database: string,
    /** What opens the encrypted database. Defaults to `storeKeyFromEnvironment()` (see `openDatabase`). */
    key?: StoreKeySource,
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
    cloud?: CloudAccess,
    /** Resume snapshots (KvResume): `enabled: false` saves none whatever the setting says. */
    resume?: {enabled?: boolean, pendingWritesWaitMs?: number}
};

/**
 * The services a `Core` delegates to, on one database, and `incognito`: the conversation services
 * of incognito conversations, on an in-memory one. Built by `createCoreServices`; owned by the `Core` made from them.
 */
export type CoreServices = ConversationServices & {
    settings: SettingsStore,
    cloudSettings: CloudSettingsStore,
    engine: LocalEngine,
    /** The embedding model chosen for documents (#23), loaded when a turn first needs it. */
    embeddings: EmbeddingModelChoice,
    incognito: ConversationServices,
    /** Which of the two sets holds each conversation (incognito ones registered when created). */
    router: ConversationRouter<ConversationServices>,
    /** See `CoreOptions.deletionGraceMs`. */
    deletionGraceMs: number
};

export const defaultStreamSaveIntervalMs = 100;
export const defaultDeletionGraceMs = 500;

/**
 * Wires the core's services in one place (VS Code's `createServices` idea): each gets what it
 * depends on through its constructor. `llama` may be a function, called only when a model loads
 * (front ends that never load one, such as `conversations list`, never start the native backend).
 */
export function createCoreServices(llama: Llama | (() => Promise<Llama>), options: CoreOptions): CoreServices {
    const database = openDatabase(options.database, {key: options.key});
    const audit = new AuditLog(database);
    const settings = new SettingsStore(database);
    const cloudSettings = new CloudSettingsStore(settings, audit, options.cloud?.settingsOverride);
    // The engine records each session's steps in the trail of the conversation they belong to (the router is made below, before any load).
    const engine = new LocalEngine(llama, {auditOf: (conversationId) => router.auditOf(conversationId)}, settings, options.engine);
    // On the chat model's backend: an embedding model is used only beside a loaded chat model.
    const embeddings = new EmbeddingModelChoice(settings,
        () => engine.model == null || engine.info == null ? null : {llama: engine.model.llama, threads: engine.info.threads},
        {scratchParent: options.engine?.scratchParent});
    const shared = {engine, cloudSettings, cloud: options.cloud, purge: options.purge,
        streamSaveIntervalMs: options.streamSaveIntervalMs ?? defaultStreamSaveIntervalMs, embedder: () => embeddings.current()};
    // Each set's cloud turns are checked against the text of both sets' other conversations.
    const fingerprintStores = () => [stored.store, incognito.store];
    const stored = createConversationServices({...shared, database, audit, fingerprintStores});
    const incognito = createConversationServices({...shared, database: openDatabase(":memory:"), incognito: true, fingerprintStores});
    // Resume snapshots of stored conversations only, sealed under the store's key (none for an incognito one, nor on a database without a key).
    engine.useResume(KvResume.create({
        database, audit, isStored: (conversationId) => stored.store.find(conversationId) != null,
        enabled: () => options.resume?.enabled !== false && settings.get<boolean>(settingKeys.app.resumeSnapshots) !== false,
        maxBytes: () => (settings.get<number>(settingKeys.app.resumeSnapshotMaxMiB) ?? defaultResumeSnapshotMaxMiB) * 2 ** 20,
        pendingWritesWaitMs: options.resume?.pendingWritesWaitMs
    }));
    const router = new ConversationRouter({stored, incognito});
    return {
        ...stored,
        settings,
        cloudSettings,
        engine,
        embeddings,
        incognito,
        router,
        deletionGraceMs: options.deletionGraceMs ?? defaultDeletionGraceMs
    };
}

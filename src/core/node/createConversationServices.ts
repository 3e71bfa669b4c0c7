import type Database from "better-sqlite3-multiple-ciphers";
import {AuditLog} from "./audit/AuditLog.js";
import {CanaryLedger} from "./cloud/CanaryLedger.js";
import {AttachmentStore} from "./documents/AttachmentStore.js";
import type {DocumentEmbedder} from "./documents/embedding/DocumentEmbedder.js";
import {ReplySources} from "./documents/ReplySources.js";
import type {LocalEngine} from "./engine/LocalEngine.js";
import type {CloudSettingsStore} from "./settings/CloudSettingsStore.js";
import {ConversationStore} from "./database/ConversationStore.js";
import type {DeletionPurgerOptions} from "./database/DeletionPurger.js";
import type {CloudAccess} from "./turns/CloudTurnService.js";
import {OnDemandCloudTurns} from "./turns/OnDemandCloudTurns.js";
import {LocalTurnService} from "./turns/LocalTurnService.js";

/** The services that hold what a conversation is made of: its rows, its audit trail, its canary hashes, its turns. */
export type ConversationServices = {
    database: Database.Database,
    audit: AuditLog,
    store: ConversationStore,
    /** The documents of the conversations in `store` (#23), in the same database. */
    attachments: AttachmentStore,
    /** What each reply was given of those documents (#23 items 4, 7): its citations, and what went where. */
    replySources: ReplySources,
    canaries: CanaryLedger,
    localTurns: LocalTurnService,
    cloudTurns: OnDemandCloudTurns
};

export type ConversationServicesOptions = {
    database: Database.Database,
    /** The trail's log. Defaults to a new one on `database` (the disk core passes the one its engine and settings record into). */
    audit?: AuditLog,
    engine: LocalEngine,
    cloudSettings: CloudSettingsStore,
    /** Every store whose conversations are fingerprinted for this set's cloud turns (see `CloudTurnService`). */
    fingerprintStores: () => ConversationStore[],
    /** Marks every conversation of this set incognito (an in-memory database). */
    incognito?: boolean,
    cloud?: CloudAccess,
    purge?: DeletionPurgerOptions,
    streamSaveIntervalMs: number,
    /** The embedding model chosen for documents (#23). Defaults to none: retrieval is BM25 alone. */
    embedder?: () => Promise<DocumentEmbedder | null>
};

/**
 * The conversation services on one database: the core's own on its file, and those of incognito
 * conversations on an in-memory database (nothing written to disk, gone when it closes). Both
 * share the core's one engine (the model is never loaded twice) and its cloud settings.
 */
export function createConversationServices({database, audit = new AuditLog(database), engine, cloudSettings, fingerprintStores, incognito = false,
    cloud = {}, purge, streamSaveIntervalMs, embedder}: ConversationServicesOptions): ConversationServices {
    const store = new ConversationStore(database, {audit, purge, incognito});
    const canaries = new CanaryLedger(database);
    const attachments = new AttachmentStore(database);
    const replySources = new ReplySources(database);
    return {
        database,
        audit,
        store,
        attachments,
        replySources,
        canaries,
        localTurns: new LocalTurnService({store, audit, engine, attachments, replySources, streamSaveIntervalMs, embedder}),
        cloudTurns: new OnDemandCloudTurns({store, attachments, replySources, audit, canaries, settings: cloudSettings, access: cloud, streamSaveIntervalMs, fingerprintStores})
    };
}

import type Database from "better-sqlite3-multiple-ciphers";
import {AuditLog} from "./audit/AuditLog.js";
import {CanaryLedger} from "./cloud/CanaryLedger.js";
import type {LocalEngine} from "./engine/LocalEngine.js";
import type {CloudSettingsStore} from "./settings/CloudSettingsStore.js";
import {ConversationStore} from "./store/ConversationStore.js";
import type {DeletionPurgerOptions} from "./store/DeletionPurger.js";
import {openDatabase} from "./store/openDatabase.js";
import {CloudTurnService, type CloudAccess} from "./turns/CloudTurnService.js";
import {LocalTurnService} from "./turns/LocalTurnService.js";

/** The services that hold what a conversation is made of: its rows, its audit trail, its canary hashes, its turns. */
export type ConversationServices = {
    database: Database.Database,
    audit: AuditLog,
    store: ConversationStore,
    canaries: CanaryLedger,
    localTurns: LocalTurnService,
    cloudTurns: CloudTurnService
};

export type IncognitoServicesOptions = {
    engine: LocalEngine,
    cloudSettings: CloudSettingsStore,
    /** The database's conversations: fingerprinted for an incognito conversation's cloud turns, as the incognito ones are. */
    diskStore: ConversationStore,
    cloud?: CloudAccess,
    purge?: DeletionPurgerOptions,
    streamSaveIntervalMs: number
};

/**
 * The conversation services of incognito conversations: the same services on an in-memory
 * database (nothing written to disk, gone when it closes), sharing the disk core's one engine
 * (the model is never loaded twice) and its cloud settings.
 */
export function createIncognitoServices({engine, cloudSettings, diskStore, cloud = {}, purge, streamSaveIntervalMs}: IncognitoServicesOptions): ConversationServices {
    const database = openDatabase(":memory:");
    const audit = new AuditLog(database);
    const store = new ConversationStore(database, {audit, purge, incognito: true});
    const canaries = new CanaryLedger(database);
    return {
        database,
        audit,
        store,
        canaries,
        localTurns: new LocalTurnService({store, audit, engine, streamSaveIntervalMs}),
        cloudTurns: new CloudTurnService({store, audit, canaries, settings: cloudSettings, access: cloud, streamSaveIntervalMs,
            fingerprintStores: () => [store, diskStore]})
    };
}

import type {ConversationId} from "../common/types.js";
import type {AuditLog} from "./audit/AuditLog.js";
import type {AuditLogOf} from "./audit/AuditLogOf.js";

/** What the router hands out per conversation; in the core, `ConversationServices`. */
export type RoutedServices = {audit: AuditLog};

/**
 * Which service set holds each conversation: the stored set (the database on disk) or the
 * incognito set (an in-memory database). Incognito conversations are registered here when they
 * are created and unregistered when deleted; every other id belongs to the stored set, whose store
 * then answers whether it exists. The membership lives in memory: routing a call runs no SQL.
 */
export class ConversationRouter<Services extends RoutedServices> implements AuditLogOf {
    public readonly stored: Services;
    public readonly incognito: Services;
    private readonly _incognitoIds = new Set<ConversationId>();

    public constructor({stored, incognito}: {stored: Services, incognito: Services}) {
        this.stored = stored;
        this.incognito = incognito;
    }

    /** The set a new conversation goes to. */
    public setFor({incognito}: {incognito: boolean}): Services {
        return incognito ? this.incognito : this.stored;
    }

    /** From now on, `conversationId` is served by the incognito set. */
    public registerIncognito(conversationId: ConversationId): void {
        this._incognitoIds.add(conversationId);
    }

    /** The conversation is gone (deleted): its id falls back to the stored set, where it is not found. */
    public unregister(conversationId: ConversationId): void {
        this._incognitoIds.delete(conversationId);
    }

    /** Every incognito conversation is gone ("Delete everything"). */
    public unregisterAllIncognito(): void {
        this._incognitoIds.clear();
    }

    public isIncognito(conversationId: ConversationId): boolean {
        return this._incognitoIds.has(conversationId);
    }

    /** The services holding the conversation: the incognito set for a registered incognito conversation, else the stored set. */
    public servicesOf(conversationId: ConversationId): Services {
        return this.isIncognito(conversationId) ? this.incognito : this.stored;
    }

    /** The log holding the conversation's trail; `null` (events of no conversation) and unknown ids: the stored set's. */
    public auditOf(conversationId: ConversationId | null): AuditLog {
        return conversationId == null ? this.stored.audit : this.servicesOf(conversationId).audit;
    }

    /** Both sets, incognito first (lists show incognito conversations with the stored). */
    public sets(): [Services, Services] {
        return [this.incognito, this.stored];
    }
}

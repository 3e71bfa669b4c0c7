import type Database from "better-sqlite3-multiple-ciphers";
import type {Token} from "node-llama-cpp";
import type {ConversationId, SessionEndReason} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import {tokensOfState} from "../engine/SequenceStateBytes.js";
import {snapshotKeyOf} from "../store/keys/snapshotKeys.js";
import {KvSnapshotStore} from "./KvSnapshotStore.js";
import {associatedData, keyIdOf, openKvSnapshot, sealKvSnapshot, type KvSnapshotBinding} from "./sealKvSnapshot.js";

/** Session ends that keep a snapshot: the conversation goes on later. Closing, deleting, cancelling, a fault, a model unload keep none. */
const savingReasons: ReadonlySet<SessionEndReason> = new Set(["evict", "idle", "shutdown"]);

/** Snapshots older than this are removed when a model loads. */
export const defaultSnapshotMaxAgeMs = 30 * 24 * 60 * 60_000;

export type KvRestoreOutcome =
    | {restored: true, tokens: number, sharedWithPrompt: number}
    /** `loadFailed`: the engine was given the state and failed, so the context may hold part of it. */
    | {restored: false, refusal: string | null, loadFailed: boolean};

export type KvResumeOptions = {
    database: Database.Database,
    audit: AuditLog,
    /** Whether a conversation is stored (never an incognito one, nor an API request's context). */
    isStored: (conversationId: ConversationId) => boolean,
    maxAgeMs?: number
};

/**
 * Resume at once (#25): when a stored conversation's session ends by eviction, idle timeout or
 * quit, its context's state is sealed (AES-256-GCM, `sealKvSnapshot`) into the encrypted store
 * before the scrub zeroes it; its next turn loads it into its own fresh context instead of
 * evaluating the whole history again. Any mismatch refuses the snapshot (recorded, removed), and
 * the turn evaluates the history as before.
 */
export class KvResume {
    private readonly _key: Buffer;
    private readonly _keyId: string;
    private readonly _store: KvSnapshotStore;
    private readonly _audit: AuditLog;
    private readonly _isStored: (conversationId: ConversationId) => boolean;
    private readonly _maxAgeMs: number;

    private constructor(key: Buffer, {database, audit, isStored, maxAgeMs = defaultSnapshotMaxAgeMs}: KvResumeOptions) {
        this._key = key;
        this._keyId = keyIdOf(key);
        this._store = new KvSnapshotStore(database);
        this._audit = audit;
        this._isStored = isStored;
        this._maxAgeMs = maxAgeMs;
    }

    /** Resume on `database`; null when it has no store key (unencrypted or in memory): nothing is ever saved then. */
    public static create(options: KvResumeOptions): KvResume | null {
        const key = snapshotKeyOf(options.database);
        return key == null ? null : new KvResume(key, options);
    }

    /** Removes the snapshots no load of `current` could restore (another model, settings, build, store key) and the old ones. */
    public removeStale(current: KvSnapshotBinding): number {
        const removed = this._store.removeStale(canonical(current), this._keyId, Date.now() - this._maxAgeMs);
        if (removed > 0)
            this._audit.record({kind: "kv.snapshots.removed", data: {removed, why: "made for another model, settings, build or store key, or too old"}});
        return removed;
    }

    /** Seals the state `readState` gives when the session ends for a reason that keeps one; never throws. */
    public async save(conversationId: ConversationId, reason: SessionEndReason, binding: KvSnapshotBinding, readState: () => Promise<Buffer>): Promise<void> {
        if (!savingReasons.has(reason) || !this._isStored(conversationId))
            return;
        const started = performance.now();
        let state: Buffer | null = null;
        try {
            state = await readState();
            const tokens = tokensOfState(state);
            if (tokens == null)
                throw new Error("the engine's state has no sequence state header");
            const header = {...canonical(binding), tokenCount: tokens.length};
            const {nonce, sealed} = sealKvSnapshot(this._key, associatedData(conversationId, header), state);
            if (this._store.put(conversationId, {header, keyId: this._keyId, nonce, sealed, savedAt: Date.now()}))
                this._audit.record({kind: "kv.saved", conversationId, data: {
                    reason, tokens: tokens.length, bytes: sealed.length, durationMs: Math.round(performance.now() - started)
                }});
        } catch (error) {
            this._audit.record({kind: "kv.save.failed", conversationId, data: {reason, problem: messageOf(error).slice(0, 100)}});
        } finally {
            state?.fill(0);
        }
    }

    /**
     * Loads the conversation's snapshot through `load` (into its own fresh context) when it is
     * sealed under this store key, for this conversation, model, settings and build, and covers
     * the start of `promptTokens`. Every refusal is recorded with its reason and the snapshot removed.
     */
    public async restore(conversationId: ConversationId, binding: KvSnapshotBinding, promptTokens: readonly Token[],
        load: (state: Buffer) => Promise<void>): Promise<KvRestoreOutcome> {
        const stored = this._store.get(conversationId);
        if (stored == null)
            return {restored: false, refusal: null, loadFailed: false};
        const current = canonical(binding);
        // Audit strings stay short (the at-rest test holds every one to 100 characters): what differed goes in `then` and `now`.
        const refuse = (refusal: string, {loadFailed = false, then, now}: {loadFailed?: boolean, then?: string, now?: string} = {}): KvRestoreOutcome => {
            this._store.remove(conversationId);
            this._audit.record({kind: "kv.restore.refused", conversationId, data: {
                reason: refusal, tokens: stored.header.tokenCount, ...then != null ? {then: then.slice(0, 100), now: now?.slice(0, 100)} : {}
            }});
            return {restored: false, refusal, loadFailed};
        };
        if (stored.keyId !== this._keyId)
            return refuse("it was sealed under another store key (the passphrase changed since)");
        if (stored.header.model !== current.model)
            return refuse("it was made with another model", {then: stored.header.model, now: current.model});
        if (stored.header.context !== current.context)
            return refuse("it was made with other context settings", {then: stored.header.context, now: current.context});
        if (stored.header.build !== current.build)
            return refuse("it was made by another llama.cpp build", {then: stored.header.build, now: current.build});

        const started = performance.now();
        const state = openKvSnapshot(this._key, associatedData(conversationId, {...current, tokenCount: stored.header.tokenCount}), stored.nonce, stored.sealed);
        if (state == null)
            return refuse("it does not authenticate: it was altered, or sealed for another conversation");
        try {
            const tokens = tokensOfState(state);
            if (tokens == null || tokens.length !== stored.header.tokenCount)
                return refuse("its state does not hold the tokens its header names");
            const shared = sharedPrefixLength(tokens, promptTokens);
            if (shared <= 1)
                return refuse("the conversation's history changed: the snapshot covers none of this prompt");
            try {
                await load(state);
            } catch (error) {
                return refuse("the engine could not load it", {loadFailed: true, then: "loadable", now: messageOf(error)});
            }
            this._audit.record({kind: "kv.restored", conversationId, data: {
                tokens: tokens.length, sharedWithPrompt: shared, promptTokens: promptTokens.length, durationMs: Math.round(performance.now() - started)
            }});
            return {restored: true, tokens: tokens.length, sharedWithPrompt: shared};
        } finally {
            state.fill(0);
        }
    }

    /** Whether the conversation has a snapshot (tests, the isolation report). */
    public has(conversationId: ConversationId): boolean {
        return this._store.has(conversationId);
    }
}

/** The binding with its keys in one order: compared as text with stored ones. */
function canonical({model, context, build}: KvSnapshotBinding): KvSnapshotBinding {
    return {model, context, build};
}

function messageOf(error: unknown) {
    return error instanceof Error ? error.message : String(error);
}

function sharedPrefixLength(a: readonly Token[], b: readonly Token[]) {
    const length = Math.min(a.length, b.length);
    let index = 0;
    while (index < length && a[index] === b[index])
        index++;
    return index;
}

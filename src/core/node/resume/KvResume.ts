import type Database from "better-sqlite3-multiple-ciphers";
import type {Token} from "node-llama-cpp";
import {defaultResumeSnapshotMaxMiB} from "../../common/api/limits.js";
import type {ConversationId, SessionEndReason} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import {tokensOfState} from "../engine/SequenceStateBytes.js";
import {snapshotKeyOf} from "../database/keys/snapshotKeys.js";
import {KvSnapshotStore} from "./KvSnapshotStore.js";
import {associatedData, keyIdOf, openKvSnapshot, startSealing, type KvSnapshotBinding} from "./sealKvSnapshot.js";

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
    maxAgeMs?: number,
    /** Whether snapshots are saved at all (the `resumeSnapshots` setting, `--no-resume-snapshot`); read at each session end. Defaults to on. */
    enabled?: () => boolean,
    /** The largest state saved, in bytes (the `resumeSnapshotMaxMiB` setting); read at each session end. Defaults to `defaultSnapshotMaxBytes`. */
    maxBytes?: () => number,
    /** How long `settle` (closing) waits for pending writes. Defaults to `defaultPendingWritesWaitMs`. */
    pendingWritesWaitMs?: number,
    /** Lets other work run between sealed chunks; tests hold it to keep a write pending. */
    yieldBetweenChunks?: () => Promise<void>
};

export const defaultSnapshotMaxBytes = defaultResumeSnapshotMaxMiB * 2 ** 20;

/** How long closing waits for snapshots still being sealed and written before it drops them. */
export const defaultPendingWritesWaitMs = 10_000;

/** Bytes sealed between two yields to the event loop: a large state never holds it for long. */
const sealChunkBytes = 4 * 2 ** 20;

/**
 * Resume at once (#25): when a stored conversation's session ends by eviction, idle timeout or
 * quit, its context's state is read before the scrub zeroes it, then sealed (AES-256-GCM,
 * `sealKvSnapshot`) into the encrypted store off the session end's path; its next turn loads it into its own fresh context instead of
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
    private readonly _enabled: () => boolean;
    private readonly _maxBytes: () => number;
    private readonly _yield: () => Promise<void>;
    private readonly _pendingWritesWaitMs: number;
    /** Each conversation's snapshot being sealed and written, after its session ended: one at a time per conversation. */
    private readonly _pending = new Map<ConversationId, Promise<void>>();
    /** Set once closing stopped waiting: writes still pending then are dropped, their state zeroed. */
    private _closed = false;

    private constructor(key: Buffer, {database, audit, isStored, maxAgeMs = defaultSnapshotMaxAgeMs, enabled = () => true,
        maxBytes = () => defaultSnapshotMaxBytes, pendingWritesWaitMs = defaultPendingWritesWaitMs, yieldBetweenChunks = () => new Promise((resolve) => setImmediate(resolve))}: KvResumeOptions) {
        this._key = key;
        this._keyId = keyIdOf(key);
        this._store = new KvSnapshotStore(database);
        this._audit = audit;
        this._isStored = isStored;
        this._maxAgeMs = maxAgeMs;
        this._enabled = enabled;
        this._maxBytes = maxBytes;
        this._yield = yieldBetweenChunks;
        this._pendingWritesWaitMs = pendingWritesWaitMs;
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

    /**
     * Takes the state `readState` gives when the session ends for a reason that keeps one; never
     * throws. Only the read happens here, before the scrub zeroes the KV: sealing and writing follow
     * on their own (`settle` waits for them), so neither the session's end nor the next turn waits.
     * Nothing is read when snapshots are off, or when `estimatedBytes` (or the state read) is over the cap.
     */
    public async save(conversationId: ConversationId, reason: SessionEndReason, binding: KvSnapshotBinding, readState: () => Promise<Buffer>,
        estimatedBytes = 0): Promise<void> {
        if (this._closed || !savingReasons.has(reason) || !this._isStored(conversationId) || !this._enabled())
            return;
        const maxBytes = this._maxBytes();
        if (estimatedBytes > maxBytes)
            return this._recordTooLarge(conversationId, reason, estimatedBytes, maxBytes);
        const started = performance.now();
        let state: Buffer;
        try {
            state = await readState();
        } catch (error) {
            this._audit.record({kind: "kv.save.failed", conversationId, data: {reason, problem: messageOf(error).slice(0, 100)}});
            return;
        }
        if (state.length > maxBytes) {
            state.fill(0);
            return this._recordTooLarge(conversationId, reason, state.length, maxBytes);
        }
        const readMs = performance.now() - started;
        const previous = this._pending.get(conversationId) ?? Promise.resolve();
        const write: Promise<void> = previous.then(() => this._sealAndStore(conversationId, reason, canonical(binding), state, readMs)).finally(() => {
            if (this._pending.get(conversationId) === write)
                this._pending.delete(conversationId);
        });
        this._pending.set(conversationId, write);
    }

    /**
     * Waits for the snapshots still being sealed and written, at most `maxWaitMs`; those still
     * pending then are dropped (their state zeroed, nothing written) and no new one is taken. The
     * number dropped. Called before the database closes.
     */
    public async settle(maxWaitMs = this._pendingWritesWaitMs): Promise<number> {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const waited = await Promise.race([
            Promise.all(this._pending.values()).then(() => true),
            new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), maxWaitMs)))
        ]);
        clearTimeout(timer);
        this._closed = true;
        const dropped = waited ? 0 : this._pending.size;
        if (dropped > 0)
            this._audit.record({kind: "kv.save.dropped", data: {snapshots: dropped, why: `still being written after ${maxWaitMs} ms at close`}});
        return dropped;
    }

    /** Resolves once the conversation's pending snapshot, if any, is written (or dropped). */
    public async written(conversationId: ConversationId): Promise<void> {
        await this._pending.get(conversationId);
    }

    private _recordTooLarge(conversationId: ConversationId, reason: SessionEndReason, bytes: number, maxBytes: number) {
        this._audit.record({kind: "kv.save.skipped", conversationId, data: {
            reason, bytes, maxBytes, why: "the state is larger than the snapshot size cap (resumeSnapshotMaxMiB)"
        }});
    }

    private async _sealAndStore(conversationId: ConversationId, reason: SessionEndReason, binding: KvSnapshotBinding, state: Buffer, readMs: number) {
        const started = performance.now();
        try {
            const tokens = tokensOfState(state);
            if (tokens == null)
                throw new Error("the engine's state has no sequence state header");
            const header = {...binding, tokenCount: tokens.length};
            const {nonce, sealed} = await this._seal(associatedData(conversationId, header), state);
            if (this._closed)
                return;
            if (this._store.put(conversationId, {header, keyId: this._keyId, nonce, sealed, savedAt: Date.now()}))
                this._audit.record({kind: "kv.saved", conversationId, data: {
                    reason, tokens: tokens.length, bytes: sealed.length, readMs: Math.round(readMs), writeMs: Math.round(performance.now() - started)
                }});
        } catch (error) {
            if (!this._closed)
                this._audit.record({kind: "kv.save.failed", conversationId, data: {reason, problem: messageOf(error).slice(0, 100)}});
        } finally {
            state.fill(0);
        }
    }

    /** `sealKvSnapshot` a chunk at a time, yielding between chunks; stops early once closing dropped the write. */
    private async _seal(data: Buffer, state: Buffer) {
        const sealer = startSealing(this._key, data);
        for (let offset = 0; offset < state.length; offset += sealChunkBytes) {
            await this._yield();
            if (this._closed)
                throw new Error("closing dropped the snapshot");
            sealer.update(state.subarray(offset, offset + sealChunkBytes));
        }
        return sealer.finish();
    }

    /**
     * Loads the conversation's snapshot through `load` (into its own fresh context) when it is
     * sealed under this store key, for this conversation, model, settings and build, and covers
     * the start of `promptTokens`. Every refusal is recorded with its reason and the snapshot removed.
     */
    public async restore(conversationId: ConversationId, binding: KvSnapshotBinding, promptTokens: readonly Token[],
        load: (state: Buffer) => Promise<void>): Promise<KvRestoreOutcome> {
        // Its own snapshot may still be being written (its session ended moments ago): that one is the one to restore.
        await this.written(conversationId);
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

import os from "node:os";
import {EventRelay, withLock} from "lifecycle-utils";
import type {LlamaContextOptions, LlamaModel} from "node-llama-cpp";
import {CleanroomError} from "../../common/errors.js";
import type {ConversationId, SessionEndReason} from "../../common/types.js";
import {ConversationContext, type BeforeScrub, type SessionEnd} from "./ConversationContext.js";
import type {KvScrubber} from "./KvScrubber.js";

export type ContextPoolOptions = {
    /** Memory all pooled contexts together may take. Defaults to half of the free memory at start. */
    budgetBytes?: number,
    /** A session unused for this long ends (and is scrubbed). `0` disables. Defaults to 10 minutes. */
    idleTimeoutMs?: number
};

/** A session that ended: its scrub's report. */
export type PooledSessionEnd = SessionEnd & {conversationId: ConversationId};
/** A session starting to end: the context has left the pool, its scrub is about to run. */
export type PooledSessionEnding = {conversationId: ConversationId, contextId: string, reason: SessionEndReason};

/** Runs at a session's end before its scrub (see `BeforeScrub`): how a resume snapshot is taken. */
export type PoolBeforeScrub = (conversationId: ConversationId, reason: SessionEndReason, ...state: Parameters<BeforeScrub>) => Promise<void>;

export const defaultIdleTimeoutMs = 10 * 60 * 1000;

/** What the pool needs of a context: `ConversationContext`, or a test's fake. */
export type PooledContext = {
    readonly id: string,
    /** In use or waiting to be: never evicted, and its idle time starts again. */
    readonly busy: boolean,
    readonly ended: boolean,
    /** Scrubs and frees; never rejects (see `ConversationContext.end`). `beforeScrub` runs first (a resume snapshot). */
    end(reason: SessionEndReason, beforeScrub?: BeforeScrub): Promise<SessionEnd>
};

/** Makes a conversation's own context; the pool calls it once there is room. */
export type PooledContextFactory<Context extends PooledContext> = (conversationId: ConversationId) => Promise<Context>;

/**
 * The factory of real contexts: a new llama.cpp context of one sequence, checked against the
 * scrubber's learned layout (relearned once if the context refutes a cached one).
 */
export function conversationContextFactory(model: LlamaModel, contextOptions: LlamaContextOptions, scrubber: KvScrubber): PooledContextFactory<ConversationContext> {
    return async (conversationId) => {
        const llamaContext = await model.createContext({...contextOptions, sequences: 1});
        try {
            if (llamaContext.contextSize !== scrubber.kvCells) // a cached layout this context refutes is learned again
                await scrubber.relearnCached(`a new context has ${llamaContext.contextSize} cells, the cached layout ${scrubber.kvCells}`);
            if (llamaContext.contextSize !== scrubber.kvCells)
                throw new CleanroomError("INTERNAL", `A new context has ${llamaContext.contextSize} cells, the scrubber was learned for ${scrubber.kvCells}.`);
        } catch (error) {
            // Never used (zero-filled when allocated, nothing evaluated): freed, with nothing to scrub.
            await llamaContext.dispose();
            throw error;
        }
        return ConversationContext._create(llamaContext, conversationId, scrubber);
    };
}

export function defaultPoolBudgetBytes() {
    return Math.floor(os.freemem() / 2);
}

/**
 * Owns one `ConversationContext` per conversation within a memory budget. Opening a
 * conversation that does not fit ends the least recently used idle sessions first.
 * Every way a session ends goes through `ConversationContext.end`, which scrubs.
 */
export class ContextPool<Context extends PooledContext = ConversationContext> {
    public readonly budgetBytes: number;
    public readonly contextBytes: number;
    private readonly _createContext: PooledContextFactory<Context>;
    private readonly _idleTimeoutMs: number;
    private readonly _contexts = new Map<ConversationId, Context>();
    private readonly _idleTimers = new Map<ConversationId, NodeJS.Timeout>();
    /** A session starts to end (its context has left the pool; the scrub is about to run). */
    public readonly onSessionEnding = new EventRelay<PooledSessionEnding>();
    /** A session ended, scrubbed (verified or not: see the report). */
    public readonly onSessionEnd = new EventRelay<PooledSessionEnd>();
    private readonly _ending = new Set<Promise<unknown>>();
    private _disposed = false;
    /** Set by the engine when resume snapshots are kept (a stored database with a key). */
    public beforeScrub: PoolBeforeScrub | null = null;

    public constructor(createContext: PooledContextFactory<Context>, contextBytes: number, {
        budgetBytes = defaultPoolBudgetBytes(), idleTimeoutMs = defaultIdleTimeoutMs
    }: ContextPoolOptions = {}) {
        this._createContext = createContext;
        this.contextBytes = contextBytes;
        this.budgetBytes = budgetBytes;
        this._idleTimeoutMs = idleTimeoutMs;
    }

    public get capacity() {
        return Math.floor(this.budgetBytes / this.contextBytes);
    }

    public get size() {
        return this._contexts.size;
    }

    public conversations(): ConversationId[] {
        return [...this._contexts.keys()];
    }

    public peek(conversationId: ConversationId): Context | undefined {
        return this._contexts.get(conversationId);
    }

    /** The conversation's own context, created (after evicting as needed) when it has none. */
    public async open(conversationId: ConversationId): Promise<{context: Context, created: boolean, evicted: ConversationId[]}> {
        const existing = this._contexts.get(conversationId);
        if (existing != null && !existing.ended) {
            this._touch(conversationId, existing);
            return {context: existing, created: false, evicted: []};
        }

        // Serialise creation so that two opens cannot both take the last free slot.
        return await withLock([this, "open"], () => this._create(conversationId));
    }

    public async end(conversationId: ConversationId, reason: SessionEndReason): Promise<SessionEnd | null> {
        const context = this._contexts.get(conversationId);
        if (context == null)
            return null;

        this._contexts.delete(conversationId);
        this._clearIdleTimer(conversationId);
        this.onSessionEnding.dispatchEvent({conversationId, contextId: context.id, reason});
        const beforeScrub = this.beforeScrub;
        const ending = context.end(reason, beforeScrub == null ? undefined : (readState, tokens) => beforeScrub(conversationId, reason, readState, tokens));
        this._ending.add(ending);
        try {
            const result = await ending;
            this.onSessionEnd.dispatchEvent({...result, conversationId});
            return result;
        } finally {
            this._ending.delete(ending);
        }
    }

    /**
     * Ends every session, each on its own: one that fails never keeps the others from ending. The
     * reports, unverified ones included; rejects only when a session could not report its end,
     * once every other has ended.
     */
    public async endAll(reason: SessionEndReason): Promise<SessionEnd[]> {
        const settled = await Promise.allSettled(this.conversations().map((conversationId) => this.end(conversationId, reason)));
        await Promise.allSettled([...this._ending]);
        const errors = settled.flatMap((outcome) => outcome.status === "rejected" ? [outcome.reason as unknown] : []);
        if (errors.length > 0)
            throw errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} sessions could not report their end.`);
        return settled.flatMap((outcome) => outcome.status === "fulfilled" && outcome.value != null ? [outcome.value] : []);
    }

    public async dispose(reason: SessionEndReason = "unload") {
        if (this._disposed)
            return;

        this._disposed = true;
        await this.endAll(reason);
    }

    private async _create(conversationId: ConversationId) {
        if (this._disposed)
            throw new CleanroomError("CONTEXT_DISPOSED", "The context pool was shut down.");

        const existing = this._contexts.get(conversationId);
        if (existing != null && !existing.ended) {
            this._touch(conversationId, existing);
            return {context: existing, created: false, evicted: []};
        }

        if (this.contextBytes > this.budgetBytes)
            throw new CleanroomError(
                "POOL_BUDGET_TOO_SMALL",
                `One context needs ${this.contextBytes} bytes but the pool's budget is ${this.budgetBytes}.`,
                {contextBytes: this.contextBytes, budgetBytes: this.budgetBytes}
            );

        const evicted: ConversationId[] = [];
        // A context being scrubbed still holds its memory: a new one waits for a scrub to end before evicting anyone.
        while ((this._contexts.size + this._ending.size + 1) * this.contextBytes > this.budgetBytes) {
            if (this._ending.size > 0) {
                await Promise.race(this._ending);
                continue;
            }
            const victim = this._leastRecentlyUsedIdle();
            if (victim == null)
                throw new CleanroomError(
                    "POOL_BUDGET_TOO_SMALL",
                    `All ${this._contexts.size} pooled contexts are generating; none can be evicted to make room.`,
                    {pooled: this._contexts.size, budgetBytes: this.budgetBytes}
                );
            evicted.push(victim);
            await this.end(victim, "evict");
        }

        const context = await this._createContext(conversationId);
        this._contexts.set(conversationId, context);
        this._touch(conversationId, context);
        return {context, created: true, evicted};
    }

    /** The map keeps use order (see `_touch`): the first idle entry is the least recently used. */
    private _leastRecentlyUsedIdle(): ConversationId | undefined {
        for (const [conversationId, context] of this._contexts)
            if (!context.busy)
                return conversationId;

        return undefined;
    }

    /** Marks use (LRU order follows insertion order of the map) and restarts the idle timer. */
    private _touch(conversationId: ConversationId, context: Context) {
        this._contexts.delete(conversationId);
        this._contexts.set(conversationId, context);
        this._clearIdleTimer(conversationId);
        if (this._idleTimeoutMs > 0) {
            const timer = setTimeout(() => {
                if (this._contexts.get(conversationId)?.busy === true)
                    this._touch(conversationId, context);
                else
                    void this.end(conversationId, "idle").catch(() => undefined);
            }, this._idleTimeoutMs);
            timer.unref();
            this._idleTimers.set(conversationId, timer);
        }
    }

    private _clearIdleTimer(conversationId: ConversationId) {
        const timer = this._idleTimers.get(conversationId);
        if (timer != null)
            clearTimeout(timer);
        this._idleTimers.delete(conversationId);
    }
}

import os from "node:os";
import {EventRelay, withLock} from "lifecycle-utils";
import type {LlamaContext, LlamaContextOptions, LlamaModel} from "node-llama-cpp";
import {CleanroomError} from "../../common/errors.js";
import type {ConversationId, SessionEndReason} from "../../common/types.js";
import {ConversationContext, type BeforeScrub, type SessionEnd} from "./ConversationContext.js";
import type {KvScrubber} from "./KvScrubber.js";
import {FreshContextReserve, type FreshContextSource} from "./FreshContextReserve.js";

export type ContextPoolOptions = {
    /** Memory all pooled contexts together may take. Defaults to half of the free memory at start. */
    budgetBytes?: number,
    /** A session unused for this long ends (and is scrubbed). `0` disables. Defaults to 10 minutes. */
    idleTimeoutMs?: number,
    /**
     * Never-used contexts kept created ahead (see `FreshContextReserve`), so that a new session does
     * not wait for its context to be made; they count in the budget and are the first freed when a
     * session needs the room. Defaults to `0` (each context is created on its session's path): the
     * app's contexts can be large, and a conversation opens seldom; `cleanroom serve` keeps some.
     */
    freshReserve?: number
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
    readonly disposed: boolean,
    /** Scrubs and frees; never rejects (see `ConversationContext.dispose`). `beforeScrub` runs first (a resume snapshot). */
    dispose(reason: SessionEndReason, beforeScrub?: BeforeScrub): Promise<SessionEnd>
};

/**
 * Makes a conversation's own context, once there is room: from `fresh`, a never-used context taken
 * from the pool's reserve, when it has one.
 */
export type PooledContextFactory<Context extends PooledContext, Fresh = never> = (conversationId: ConversationId, fresh: Fresh | null) => Promise<Context>;

/** What makes a pool's contexts: each session's own, and (with a reserve) never-used ones ahead of time. */
export type PooledContextSource<Context extends PooledContext, Fresh = never> = PooledContextFactory<Context, Fresh> | {
    adopt: PooledContextFactory<Context, Fresh>,
    fresh: FreshContextSource<Fresh>
};

/**
 * The factory of real contexts: a new llama.cpp context of one sequence (made ahead by the
 * reserve, or on the session's path), checked against the scrubber's learned layout (relearned once
 * if the context refutes a cached one), then owned by its conversation.
 */
export function conversationContextFactory(model: LlamaModel, contextOptions: LlamaContextOptions, scrubber: KvScrubber): PooledContextSource<ConversationContext, LlamaContext> {
    const fresh: FreshContextSource<LlamaContext> = {
        create: async () => {
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
            return llamaContext;
        },
        // Never used: nothing to scrub.
        discard: async (llamaContext) => await llamaContext.dispose()
    };
    return {
        fresh,
        adopt: async (conversationId, reserved) => ConversationContext._create(reserved ?? await fresh.create(), conversationId, scrubber)
    };
}

export function defaultPoolBudgetBytes() {
    return Math.floor(os.freemem() / 2);
}

/**
 * Owns one `ConversationContext` per conversation within a memory budget. Opening a
 * conversation that does not fit ends the least recently used idle sessions first.
 * Every way a session ends goes through `ConversationContext.dispose`, which scrubs.
 */
export class ContextPool<Context extends PooledContext = ConversationContext, Fresh = LlamaContext> {
    public readonly budgetBytes: number;
    public readonly contextBytes: number;
    private readonly _createContext: PooledContextFactory<Context, Fresh>;
    private readonly _reserve: FreshContextReserve<Fresh> | null;
    private readonly _idleTimeoutMs: number;
    private readonly _contexts = new Map<ConversationId, Context>();
    private readonly _idleTimers = new Map<ConversationId, NodeJS.Timeout>();
    /** A session starts to end (its context has left the pool; the scrub is about to run). */
    public readonly onSessionEnding = new EventRelay<PooledSessionEnding>();
    /** A session ended, scrubbed (verified or not: see the report). */
    public readonly onSessionEnd = new EventRelay<PooledSessionEnd>();
    private readonly _ending = new Set<Promise<unknown>>();
    private _disposed = false;
    /** A session's context is being made (opens run one at a time): it counts as held. */
    private _opening = false;
    /** Set by the engine when resume snapshots are kept (a stored database with a key). */
    public beforeScrub: PoolBeforeScrub | null = null;

    public constructor(source: PooledContextSource<Context, Fresh>, contextBytes: number, {
        budgetBytes = defaultPoolBudgetBytes(), idleTimeoutMs = defaultIdleTimeoutMs, freshReserve = 0
    }: ContextPoolOptions = {}) {
        this._createContext = typeof source === "function" ? source : source.adopt;
        this._reserve = typeof source === "function" || freshReserve <= 0 ? null : new FreshContextReserve(source.fresh, freshReserve);
        this.contextBytes = contextBytes;
        this.budgetBytes = budgetBytes;
        this._idleTimeoutMs = idleTimeoutMs;
        this._refillReserve();
    }

    /** Never-used contexts created ahead and not yet taken (or being created). */
    public get reserved() {
        return this._reserve?.held ?? 0;
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
        if (existing != null && !existing.disposed) {
            this._touch(conversationId, existing);
            return {context: existing, created: false, evicted: []};
        }

        // Serialise creation so that two opens cannot both take the last free slot.
        return await withLock([this, "open"], () => this._create(conversationId));
    }

    /** Ends one conversation's session (scrubbed); the pool lives on. Null when the conversation had none. */
    public async endSession(conversationId: ConversationId, reason: SessionEndReason): Promise<SessionEnd | null> {
        const context = this._contexts.get(conversationId);
        if (context == null)
            return null;

        this._contexts.delete(conversationId);
        this._clearIdleTimer(conversationId);
        this.onSessionEnding.dispatchEvent({conversationId, contextId: context.id, reason});
        const beforeScrub = this.beforeScrub;
        const ending = context.dispose(reason, beforeScrub == null ? undefined : (readState, tokens) => beforeScrub(conversationId, reason, readState, tokens));
        this._ending.add(ending);
        try {
            const result = await ending;
            this.onSessionEnd.dispatchEvent({...result, conversationId});
            return result;
        } finally {
            this._ending.delete(ending);
            this._refillReserve();
        }
    }

    /**
     * Ends every session, each on its own: one that fails never keeps the others from ending. The
     * reports, unverified ones included; rejects only when a session could not report its end,
     * once every other has ended. The pool lives on: `dispose` is its end.
     */
    public async endAllSessions(reason: SessionEndReason): Promise<SessionEnd[]> {
        const settled = await Promise.allSettled(this.conversations().map((conversationId) => this.endSession(conversationId, reason)));
        await Promise.allSettled([...this._ending]);
        const errors = settled.flatMap((outcome) => outcome.status === "rejected" ? [outcome.reason as unknown] : []);
        if (errors.length > 0)
            throw errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} sessions could not report their end.`);
        return settled.flatMap((outcome) => outcome.status === "fulfilled" && outcome.value != null ? [outcome.value] : []);
    }

    /** The pool's end: every session ended (scrubbed) with `reason`, the reserve freed, no session opens again. Runs once. */
    public async dispose(reason: SessionEndReason = "unload") {
        if (this._disposed)
            return;

        this._disposed = true;
        await Promise.all([this.endAllSessions(reason), this._reserve?.dispose()]);
    }

    public get disposed() {
        return this._disposed;
    }

    /** `await using pool = new ContextPool(…)`: disposed as a model unload. */
    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    private async _create(conversationId: ConversationId) {
        if (this._disposed)
            throw new CleanroomError("CONTEXT_DISPOSED", "The context pool was shut down.");

        const existing = this._contexts.get(conversationId);
        if (existing != null && !existing.disposed) {
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
        // Counted from here on as held: a reserve refilled meanwhile (a session ended) cannot take its room.
        this._opening = true;
        // Taken from the reserve, it is this session's alone.
        const fresh = this._reserve?.take() ?? null;
        try {
            // A context being scrubbed still holds its memory: a new one waits for a scrub to end before evicting anyone,
            // and frees the reserve's never-used contexts first.
            while (this._contextsHeld() > this._budgetedContexts()) {
                if (this.reserved > 0 && await this._reserve!.shrink())
                    continue;
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
                await this.endSession(victim, "evict");
            }
        } catch (error) {
            if (fresh != null)
                await this._reserve!.discard(fresh);
            throw error;
        } finally {
            this._opening = false;
        }

        const context = await this._createContext(conversationId, fresh);
        this._contexts.set(conversationId, context);
        this._touch(conversationId, context);
        this._refillReserve();
        return {context, created: true, evicted};
    }

    /** Contexts holding memory: the sessions' (and the one being opened), those being scrubbed, the reserve's. */
    private _contextsHeld() {
        return this._contexts.size + (this._opening ? 1 : 0) + this._ending.size + this.reserved;
    }

    private _budgetedContexts() {
        return Math.floor(this.budgetBytes / this.contextBytes);
    }

    /** Tops the reserve up, off every session's path, with what room the sessions leave. */
    private _refillReserve() {
        this._reserve?.refill(() => !this._disposed && this._contextsHeld() + 1 <= this._budgetedContexts());
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
                    void this.endSession(conversationId, "idle").catch(() => undefined);
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

import {beforeEach, describe, expect, it, vi} from "vitest";
import type {ConversationId, SessionEndReason} from "../../src/core/common/types.js";
import {ContextPool, type PooledContext, type PooledSessionEnd} from "../../src/core/node/engine/ContextPool.js";
import type {SessionEnd} from "../../src/core/node/engine/ConversationContext.js";

/** A context without llama.cpp: it records how its session ended; `busy` is set by the test (a turn running). */
class FakeContext implements PooledContext {
    public static created = 0;
    public readonly id = `fake-${++FakeContext.created}`;
    public busy = false;
    public endedFor: SessionEndReason | null = null;

    public get disposed() {
        return this.endedFor != null;
    }

    public async dispose(reason: SessionEndReason): Promise<SessionEnd> {
        this.endedFor ??= reason;
        return {
            contextId: this.id, reason, kvCells: 256, layers: 2, bytesZeroed: 1024, bytesChecked: 1024, nonZeroBytes: 0,
            cellsReadBack: 256, verified: true, failure: null, layoutSource: "learned", durationMs: 1
        };
    }
}

const minute = 60_000;
const contextBytes = 1000;

function fakePool({contexts = 2, idleTimeoutMs = 10 * minute}: {contexts?: number, idleTimeoutMs?: number} = {}) {
    const made = new Map<ConversationId, FakeContext>();
    const pool = new ContextPool(async (conversationId) => {
        const context = new FakeContext();
        made.set(conversationId, context);
        return context;
    }, contextBytes, {budgetBytes: contexts * contextBytes, idleTimeoutMs});
    const ends: PooledSessionEnd[] = [];
    pool.onSessionEnd.createListener((end) => ends.push(end));
    /** Resolves with the next session end the pool reports. */
    const nextEnd = () => new Promise<PooledSessionEnd>((resolve) => {
        const listener = pool.onSessionEnd.createListener((end) => {
            listener.dispose();
            resolve(end);
        });
    });
    return {pool, made, ends, nextEnd};
}

beforeEach(() => {
    vi.useFakeTimers();
    return () => vi.useRealTimers();
});

describe("an idle conversation's context", () => {
    it("is scrubbed after the idle time, not before", async () => {
        const {pool, made, ends, nextEnd} = fakePool();
        await pool.open("trip");
        const ended = nextEnd();

        await vi.advanceTimersByTimeAsync(10 * minute - 1);
        expect(made.get("trip")!.disposed).toBe(false);
        expect(pool.conversations()).toEqual(["trip"]);

        await vi.advanceTimersByTimeAsync(1);
        await expect(ended).resolves.toMatchObject({conversationId: "trip", reason: "idle", verified: true});
        expect(made.get("trip")!.endedFor).toBe("idle");
        expect(pool.conversations()).toEqual([]);
        expect(ends).toHaveLength(1);
    });

    it("lives on while it is used: each use starts its idle time again", async () => {
        const {pool, made, nextEnd} = fakePool();
        await pool.open("trip");
        await vi.advanceTimersByTimeAsync(6 * minute);
        await pool.open("trip");
        await vi.advanceTimersByTimeAsync(6 * minute);
        expect(made.get("trip")!.disposed).toBe(false);

        const ended = nextEnd();
        await vi.advanceTimersByTimeAsync(4 * minute);
        await expect(ended).resolves.toMatchObject({conversationId: "trip", reason: "idle"});
    });

    it("is not ended while a reply is being generated; its idle time starts again instead", async () => {
        const {pool, made, nextEnd} = fakePool();
        const {context} = await pool.open("long-reply");
        context.busy = true;
        await vi.advanceTimersByTimeAsync(25 * minute);
        expect(made.get("long-reply")!.disposed).toBe(false);

        context.busy = false;
        const ended = nextEnd();
        await vi.advanceTimersByTimeAsync(10 * minute);
        await expect(ended).resolves.toMatchObject({conversationId: "long-reply", reason: "idle"});
    });

    it("is kept however long it waits when the idle time is 0 (off)", async () => {
        const {pool, made} = fakePool({idleTimeoutMs: 0});
        await pool.open("kept");
        await vi.advanceTimersByTimeAsync(24 * 60 * minute);
        expect(made.get("kept")!.disposed).toBe(false);
        expect(pool.conversations()).toEqual(["kept"]);
    });
});

describe("a full pool", () => {
    it("evicts the least recently used conversation first, scrubbing it", async () => {
        const {pool, made, ends} = fakePool({contexts: 2});
        await pool.open("first");
        await pool.open("second");
        await pool.open("first"); // used again: "second" is now the least recently used

        const opened = await pool.open("third");
        expect(opened).toMatchObject({created: true, evicted: ["second"]});
        expect(made.get("second")!.endedFor).toBe("evict");
        expect(made.get("first")!.disposed).toBe(false);
        expect(pool.conversations().sort()).toEqual(["first", "third"]);
        expect(ends.map((end) => [end.conversationId, end.reason])).toEqual([["second", "evict"]]);
    });

    it("never evicts a conversation that is generating: the next idle one goes, and when none is idle the open is refused", async () => {
        const {pool, made} = fakePool({contexts: 2});
        (await pool.open("generating")).context.busy = true;
        await pool.open("idle");

        await expect(pool.open("new")).resolves.toMatchObject({evicted: ["idle"]});
        expect(made.get("generating")!.disposed).toBe(false);

        made.get("new")!.busy = true;
        await expect(pool.open("one-more")).rejects.toMatchObject({code: "POOL_BUDGET_TOO_SMALL", details: {pooled: 2}});
        expect([...made.values()].filter((context) => context.disposed)).toHaveLength(1);
    });

    it("a budget smaller than one context refuses every open with POOL_BUDGET_TOO_SMALL, saying both sizes", async () => {
        const {pool} = fakePool({contexts: 0.5});
        await expect(pool.open("any")).rejects.toMatchObject({code: "POOL_BUDGET_TOO_SMALL", details: {contextBytes, budgetBytes: contextBytes / 2}});
    });

    it("two conversations opened at once for the last free place: one takes it, the other evicts the least recently used", async () => {
        const {pool} = fakePool({contexts: 2});
        await pool.open("old");
        const [a, b] = await Promise.all([pool.open("a"), pool.open("b")]);
        expect([a.evicted, b.evicted]).toEqual([[], ["old"]]);
        expect(pool.size).toBe(2);
    });
});

describe("shutting the pool down", () => {
    it("ends every session with the reason given, and refuses later opens with CONTEXT_DISPOSED", async () => {
        const {pool, made} = fakePool({contexts: 3});
        await pool.open("a");
        await pool.open("b");
        await pool.dispose("unload");
        expect([...made.values()].map((context) => context.endedFor)).toEqual(["unload", "unload"]);
        await expect(pool.open("c")).rejects.toMatchObject({code: "CONTEXT_DISPOSED"});
    });

    it("ends every session as an unload when an `await using` block is left, and a second dispose ends nothing twice", async () => {
        const {pool, ends} = fakePool({contexts: 3});
        {
            await using scoped = pool;
            await scoped.open("a");
            await scoped.open("b");
        }
        expect(pool.disposed).toBe(true);
        expect(ends.map(({conversationId, reason}) => [conversationId, reason])).toEqual([["a", "unload"], ["b", "unload"]]);
        await pool.dispose("shutdown");
        expect(ends).toHaveLength(2);
    });

    it("stays open when every session is ended (a delete of all conversations): a conversation opens again in a new context", async () => {
        const {pool, made} = fakePool({contexts: 3});
        await pool.open("a");
        const ended = await pool.endAllSessions("delete");
        expect(ended.map(({reason}) => reason)).toEqual(["delete"]);
        expect(pool.disposed).toBe(false);
        const reopened = await pool.open("a");
        expect(reopened.created).toBe(true);
        expect(made.get("a")!.endedFor).toBeNull();
    });
});

/** A pool whose contexts come from a reserve of `reserve` never-used ones (`FreshContextReserve`), each fresh one a number. */
function reservedPool({contexts, reserve}: {contexts: number, reserve: number}) {
    let freshMade = 0;
    const discarded: number[] = [];
    const adopted = new Map<ConversationId, {fresh: number | null, context: FakeContext}>();
    const pool = new ContextPool<FakeContext, number>({
        fresh: {
            create: async () => ++freshMade,
            discard: async (fresh) => {
                discarded.push(fresh);
            }
        },
        adopt: async (conversationId, fresh) => {
            const context = new FakeContext();
            adopted.set(conversationId, {fresh, context});
            return context;
        }
    }, contextBytes, {budgetBytes: contexts * contextBytes, idleTimeoutMs: 0, freshReserve: reserve});
    return {pool, adopted, discarded, freshMade: () => freshMade};
}

describe("a reserve of contexts created ahead", () => {
    it("hands each new session a context made before it was asked for, each one once, and makes the next one off the session's path", async () => {
        const {pool, adopted, freshMade} = reservedPool({contexts: 8, reserve: 2});
        await vi.waitFor(() => expect(pool.reserved).toBe(2));
        expect(freshMade()).toBe(2);

        await pool.open("a");
        await pool.open("b");
        await pool.open("c");
        // a and b got the two made ahead; each open refilled the reserve behind it, so c found one too.
        expect([...adopted.values()].map(({fresh}) => fresh)).toEqual([1, 2, 3]);
        await vi.waitFor(() => expect(pool.reserved).toBe(2));
        // A session's own context is never given to another: reopening finds it, not a fresh one.
        expect((await pool.open("a")).created).toBe(false);
    });

    it("counts in the memory budget, and its never-used contexts are freed (no scrub) before any session is evicted", async () => {
        const {pool, adopted, discarded} = reservedPool({contexts: 2, reserve: 2});
        await vi.waitFor(() => expect(pool.reserved).toBe(2));
        await pool.open("a");
        // The budget holds 2: a's context and one in reserve; the reserve does not grow past it.
        await vi.waitFor(() => expect(pool.reserved).toBe(1));
        const opened = await pool.open("b");
        expect(opened.evicted).toEqual([]);
        expect(pool.reserved).toBe(0);
        const third = await pool.open("c");
        // Now only a session can make room: the least recently used, scrubbed.
        expect(third.evicted).toEqual(["a"]);
        expect(adopted.get("a")!.context.endedFor).toBe("evict");
        expect(discarded).toEqual([]);
    });

    it("frees a never-used context to make room for a session before evicting anyone", async () => {
        const {pool, discarded} = reservedPool({contexts: 2, reserve: 1});
        await pool.open("a");
        await vi.waitFor(() => expect(pool.reserved).toBe(1));
        // b takes the reserved context: room for it without evicting a.
        expect((await pool.open("b")).evicted).toEqual([]);
        expect(pool.conversations()).toEqual(["a", "b"]);
        expect(discarded).toEqual([]);
    });

    it("is freed when the pool shuts down (the model is unloaded or the server stops), and refills no more", async () => {
        const {pool, discarded, freshMade} = reservedPool({contexts: 4, reserve: 2});
        await vi.waitFor(() => expect(pool.reserved).toBe(2));
        await pool.open("a");
        await vi.waitFor(() => expect(pool.reserved).toBe(2));
        await pool.dispose("unload");
        expect(discarded.sort()).toEqual([2, 3]);
        expect(pool.reserved).toBe(0);
        expect(freshMade()).toBe(3);
    });
});

import {afterEach, describe, expect, it, vi} from "vitest";
import type {BackgroundScrubFault} from "../../src/core/common/api/events.js";
import type {SessionEndReason} from "../../src/core/common/types.js";
import {backgroundScrubFault} from "../../src/core/node/engine/backgroundScrubFault.js";
import {ContextPool, type PooledContext} from "../../src/core/node/engine/ContextPool.js";
import type {SessionEnd} from "../../src/core/node/engine/ConversationContext.js";

const failure = "read-back found non-zero bytes";

/** A context without llama.cpp whose scrub always reports that it could not be verified. */
class UnverifiableContext implements PooledContext {
    public static created = 0;
    public readonly id = `fake-${++UnverifiableContext.created}`;
    public busy = false;
    public disposed = false;

    public async dispose(reason: SessionEndReason): Promise<SessionEnd> {
        this.disposed = true;
        return {
            contextId: this.id, reason, kvCells: 256, layers: 2, bytesZeroed: 1024, bytesChecked: 1024, nonZeroBytes: 8,
            cellsReadBack: 256, verified: false, failure, layoutSource: "learned", durationMs: 1
        };
    }
}

const minute = 60_000;

/** A pool of two contexts, on fake timers, whose session ends go through `backgroundScrubFault` as the engine's do. */
function poolReportingFaults() {
    vi.useFakeTimers();
    const pool = new ContextPool(async () => new UnverifiableContext(), 1000, {budgetBytes: 2000, idleTimeoutMs: 10 * minute});
    const faults: BackgroundScrubFault[] = [];
    pool.onSessionEnd.createListener((end) => {
        const fault = backgroundScrubFault(end);
        if (fault != null)
            faults.push(fault);
    });
    return {pool, faults};
}

afterEach(() => {
    vi.useRealTimers();
});

describe("a session that ends with no call waiting for it, and whose scrub cannot be verified", () => {
    it("ending idle, is reported with the error a call would have got, once the idle time has passed", async () => {
        const {pool, faults} = poolReportingFaults();
        const {context} = await pool.open("left-open");

        await vi.advanceTimersByTimeAsync(10 * minute - 1);
        expect(faults).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        await expect.poll(() => faults).toHaveLength(1);
        expect(faults[0]).toMatchObject({conversationId: "left-open", contextId: context.id, reason: "idle", error: {code: "SCRUB_UNVERIFIED"}});
        expect(faults[0]!.error.message).toContain(`the KV scrub of context ${context.id} could not be verified (${failure})`);
    });

    it("evicted for another conversation's context, is reported for the evicted conversation, not the one whose turn needed room", async () => {
        const {pool, faults} = poolReportingFaults();
        const {context: oldest} = await pool.open("oldest");
        await pool.open("newer");

        await pool.open("needs-room");
        expect(faults).toEqual([expect.objectContaining({conversationId: "oldest", contextId: oldest.id, reason: "evict"})]);
    });

    it("is not reported as a background fault when a call ended the session: the call gets the error itself", async () => {
        const {pool, faults} = poolReportingFaults();
        for (const reason of ["close", "delete", "abort", "fault", "shutdown"] as const) {
            await pool.open(reason);
            const end = await pool.endSession(reason, reason);
            expect(end?.verified).toBe(false);
        }
        expect(faults).toEqual([]);
    });
});

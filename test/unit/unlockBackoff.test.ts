import fs from "node:fs";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it, vi} from "vitest";
import {UnlockBackoff} from "../../src/core/node/database/keys/UnlockBackoff.js";
import {tempDir} from "../helpers/tempCore.js";

/** The unlock's back-off, on a fake clock: 1 s after a wrong passphrase, doubling, at most 5 min, gone after the right one. */
describe("UnlockBackoff", () => {
    beforeEach(() => {
        vi.useFakeTimers();
    });
    afterEach(() => {
        vi.useRealTimers();
    });

    it("doubles the wait with each wrong passphrase in a row, up to 5 minutes, and refuses a try until it has passed", () => {
        const backoff = new UnlockBackoff();
        expect(() => backoff.ensureMayTry()).not.toThrow();
        const waits: number[] = [];
        for (let i = 0; i < 12; i++) {
            waits.push(backoff.recordFailure());
            expect(backoff.retryAfterMs()).toBe(waits.at(-1));
            vi.advanceTimersByTime(waits.at(-1)! - 1);
            expect(() => backoff.ensureMayTry(), `try ${i + 1}, 1 ms early`)
                .toThrow(expect.objectContaining({code: "UNLOCK_BACKOFF", details: {retryAfterMs: 1, failures: i + 1}}));
            vi.advanceTimersByTime(1);
            expect(() => backoff.ensureMayTry()).not.toThrow();
        }
        expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000]);
    });

    it("says in its message how long to wait", () => {
        const backoff = new UnlockBackoff();
        backoff.recordFailure();
        backoff.recordFailure();
        expect(() => backoff.ensureMayTry()).toThrow("2 wrong passphrases in a row: try again in 2 s");
    });

    it("the right passphrase resets it: the next wrong one waits 1 s again", () => {
        const backoff = new UnlockBackoff();
        for (let i = 0; i < 5; i++)
            backoff.recordFailure();
        vi.advanceTimersByTime(16_000);
        backoff.recordSuccess();
        expect(backoff.retryAfterMs()).toBe(0);
        expect(backoff.recordFailure()).toBe(1000);
    });

    it("kept in a file (0600), it survives a restart: a new process on the same database waits the rest of the wait, and doubles on from there", () => {
        const file = path.join(tempDir("unlock-backoff"), "app.db.unlock-backoff");
        const first = new UnlockBackoff({file});
        for (let i = 0; i < 4; i++)
            first.recordFailure(); // 8 s
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        vi.advanceTimersByTime(3000);

        const restarted = new UnlockBackoff({file});
        expect(restarted.retryAfterMs()).toBe(5000);
        expect(() => restarted.ensureMayTry()).toThrow(expect.objectContaining({code: "UNLOCK_BACKOFF"}));
        vi.advanceTimersByTime(5000);
        expect(restarted.recordFailure(), "the fifth in a row").toBe(16_000);
        restarted.recordSuccess();
        expect(fs.existsSync(file), "a success removes the file").toBe(false);
        expect(new UnlockBackoff({file}).retryAfterMs()).toBe(0);
    });

    it("a clock set back never makes the wait longer than the wait itself, and the wait still runs down", () => {
        const backoff = new UnlockBackoff();
        backoff.recordFailure();
        vi.setSystemTime(Date.now() - 3_600_000);
        expect(backoff.retryAfterMs()).toBe(1000);
        vi.advanceTimersByTime(400);
        expect(backoff.retryAfterMs(), "and it runs down").toBe(600);
        vi.advanceTimersByTime(600);
        expect(() => backoff.ensureMayTry()).not.toThrow();
    });
});

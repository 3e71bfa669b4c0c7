import crypto from "node:crypto";

/** The seed every randomised test uses unless told otherwise: the same run every time, in CI and here. */
export const defaultTestSeed = 20261203;

/**
 * The seed for one randomised test, printed so that a failure can be replayed:
 * `CLEANROOM_TEST_SEED=<n>` replays a run; `CLEANROOM_RANDOM_SEEDS=1` (`npm run test:random`)
 * draws a fresh seed per test; otherwise the fixed default. `legacyVariable` names an older
 * override (CLEANROOM_FUZZ_SEED, CLEANROOM_DIFF_SEED) that is still honoured.
 */
export function testSeed(label: string, legacyVariable?: string): number {
    const explicit = process.env.CLEANROOM_TEST_SEED ?? (legacyVariable != null ? process.env[legacyVariable] : undefined);
    const seed = explicit != null && explicit !== ""
        ? Number(explicit) >>> 0
        : process.env.CLEANROOM_RANDOM_SEEDS === "1" ? crypto.randomInt(1, 2 ** 31) : defaultTestSeed;
    console.info(`[${label}] seed ${seed} (replay with CLEANROOM_TEST_SEED=${seed})`);
    return seed;
}

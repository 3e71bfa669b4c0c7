import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";

export const forcedScrubFailure = "forced by the test: the read-back was reported non-zero";

/**
 * A FORCED FAULT for tests: every KV scrub still runs for real, then reports that it could not be
 * verified (as a read-back with non-zero bytes would). Returns the function that undoes it.
 */
export function forceScrubFaults(): () => void {
    const real = KvScrubber.prototype.zeroAndVerify;
    KvScrubber.prototype.zeroAndVerify = async function (this: KvScrubber, sequence) {
        const result = await real.call(this, sequence);
        return {...result, verified: false, nonZeroBytes: Math.max(1, result.nonZeroBytes), failure: forcedScrubFailure};
    };
    return () => {
        KvScrubber.prototype.zeroAndVerify = real;
    };
}

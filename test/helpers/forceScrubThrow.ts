import type {LlamaContextSequence} from "node-llama-cpp";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";

export const forcedScrubThrow = "forced by the test: the scrub threw before it zeroed anything";

/**
 * A FORCED FAULT for tests: the first `times` KV scrubs (every one by default) throw at once, as a
 * cached layout that must be learned again does when no throwaway context can be created; later
 * scrubs run for real. `scrubbed` holds every sequence a scrub was asked for, in order, to check
 * that their contexts were freed. `restore` undoes it.
 */
export function forceScrubThrows({times = Infinity}: {times?: number} = {}) {
    const real = KvScrubber.prototype.zeroAndVerify;
    const scrubbed: LlamaContextSequence[] = [];
    KvScrubber.prototype.zeroAndVerify = async function (this: KvScrubber, sequence) {
        scrubbed.push(sequence);
        if (scrubbed.length <= times)
            throw new Error(forcedScrubThrow);
        return await real.call(this, sequence);
    };
    return {
        scrubbed,
        restore: () => {
            KvScrubber.prototype.zeroAndVerify = real;
        }
    };
}

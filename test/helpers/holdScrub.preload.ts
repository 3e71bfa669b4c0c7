// `node --import` this into a spawned `cleanroom serve` (the test build's: testBuild.ts): every session's scrub waits
// before it starts, writes "scrub held" on stderr, and goes on only once the test writes a line on
// the process's stdin (one line releases one held scrub). It lets a test see what a client gets
// while a request's context is still being scrubbed, with no sleep.
import {nextStdinRelease} from "./stdinReleases.js";

if (process.env.TEST_BINDING_CP !== "true") {
    const {KvScrubber} = await import("../../src/core/node/engine/KvScrubber.js");
    const real = KvScrubber.prototype.zeroAndVerify;
    KvScrubber.prototype.zeroAndVerify = async function (this: typeof KvScrubber.prototype, ...args: Parameters<typeof real>) {
        process.stderr.write("scrub held\n");
        await nextStdinRelease();
        return await real.apply(this, args);
    };
}

// `node --import` this into a spawned `cleanroom serve` (from source): every generation there stops
// after its first token, writes "held after the first token" on stderr, and goes on only once the
// test writes a line on the process's stdin (one line releases one held generation). It lets a test
// act while a request is certainly mid-generation (a slot taken, a client leaving) with no sleep.
import type {LlamaContextSequence as Sequence} from "node-llama-cpp";
import {nextStdinRelease} from "./stdinReleases.js";

// Not in node-llama-cpp's binary check (a child forked with this preload): loading the library there breaks the check.
if (process.env.TEST_BINDING_CP !== "true")
    holdEveryGeneration((await import("node-llama-cpp")).LlamaContextSequence);

function holdEveryGeneration(LlamaContextSequence: typeof Sequence) {
    const real = LlamaContextSequence.prototype.evaluateWithMetadata;
    LlamaContextSequence.prototype.evaluateWithMetadata = async function* (this: Sequence, ...args: Parameters<typeof real>) {
        let first = true;
        for await (const output of real.apply(this, args)) {
            yield output;
            if (first) {
                first = false;
                process.stderr.write("held after the first token\n");
                await nextStdinRelease();
            }
        }
    } as typeof real;
}

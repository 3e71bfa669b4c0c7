// `node --import` this into a spawned `cleanroom serve` (the test build's: testBuild.ts): every generation there stops
// after its first token, writes "held after the first token" on stderr, and goes on only once the
// test writes a line on the process's stdin (one line releases one held generation). It lets a test
// act while a request is certainly mid-generation (a slot taken, a client leaving) with no sleep.
// With CLEANROOM_TEST_HOLD_PROMPT set (web mode, compiled with it: test/setup/testBundle.ts; its first
// core process shares its stdin), only the first generation whose prompt contains that text is held,
// after CLEANROOM_TEST_HOLD_AFTER_TOKENS tokens (defaults to 1): the others in the process run freely.
import type {LlamaContextSequence as Sequence} from "node-llama-cpp";
import {nextStdinRelease} from "./stdinReleases.js";

// Not in node-llama-cpp's binary check (a child forked with this preload): loading the library there breaks the check.
if (process.env.TEST_BINDING_CP !== "true")
    holdGenerations((await import("node-llama-cpp")).LlamaContextSequence, process.env.CLEANROOM_TEST_HOLD_PROMPT || null,
        Number(process.env.CLEANROOM_TEST_HOLD_AFTER_TOKENS || 1));

function holdGenerations(LlamaContextSequence: typeof Sequence, onlyPrompt: string | null, afterTokens: number) {
    const real = LlamaContextSequence.prototype.evaluateWithMetadata;
    let promptHeld = false;
    LlamaContextSequence.prototype.evaluateWithMetadata = async function* (this: Sequence, ...args: Parameters<typeof real>) {
        let tokensLeft = afterTokens;
        if (onlyPrompt != null) {
            // The prompt whole: what the sequence holds (a prefix reused, a prefill step) and what this call evaluates.
            if (promptHeld || !this.model.detokenize([...this.contextTokens, ...args[0]]).includes(onlyPrompt))
                tokensLeft = 0;
            else
                promptHeld = true;
        }
        for await (const output of real.apply(this, args)) {
            yield output;
            if (tokensLeft > 0 && --tokensLeft === 0) {
                process.stderr.write(afterTokens === 1 ? "held after the first token\n" : `held after ${afterTokens} tokens\n`);
                await nextStdinRelease();
            }
        }
    } as typeof real;
}

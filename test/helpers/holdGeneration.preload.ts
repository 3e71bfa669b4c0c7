// `node --import` this into a spawned `cleanroom serve` (from source): every generation there stops
// after its first token, writes "held after the first token" on stderr, and goes on only once the
// test writes a line on the process's stdin (one line releases one held generation). It lets a test
// act while a request is certainly mid-generation (a slot taken, a client leaving) with no sleep.
import readline from "node:readline";
import type {LlamaContextSequence as Sequence} from "node-llama-cpp";

const waiting: Array<() => void> = [];
let released = 0;
let listening = false;
let held = 0;
function nextRelease() {
    // Read stdin only once a generation is held: node-llama-cpp's binary check runs a child process with
    // this preload, and an open stdin there would keep it alive until the check gave up on the binary.
    if (!listening) {
        listening = true;
        readline.createInterface({input: process.stdin}).on("line", () => {
            released++;
            waiting.shift()?.();
        });
    }
    held++;
    return held <= released ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve));
}

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
                await nextRelease();
            }
        }
    } as typeof real;
}

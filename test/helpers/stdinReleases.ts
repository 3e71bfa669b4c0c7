import readline from "node:readline";

const waiting: Array<() => void> = [];
let released = 0;
let listening = false;
let held = 0;

/**
 * For the hold preloads (holdGeneration, holdScrub): resolves once the test has written as many
 * lines on the process's stdin as there were holds up to this one (one line releases one hold).
 */
export function nextStdinRelease(): Promise<void> {
    // Read stdin only once something is held: node-llama-cpp's binary check runs a child process with
    // the preload, and an open stdin there would keep it alive until the check gave up on the binary.
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

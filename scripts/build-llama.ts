/**
 * Builds node-llama-cpp's bundled llama.cpp for this machine's CPU, with OpenMP: the same build as
 * `cleanroom engine build` and the app's "Build for this CPU" button (`buildLocalLlama`). See docs/threads.md.
 *
 *   npm run build:llama
 */
import {buildLocalLlama} from "../src/core/node/engine/buildLocalLlama.js";

const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());
try {
    const built = await buildLocalLlama({
        signal: controller.signal,
        onProgress: ({phase, percent}) => process.stderr.write(`build:llama: ${phase}${percent == null ? "" : ` ${percent}%`}\n`)
    });
    process.stdout.write(`Built: ${built.binaryDirectory}\n`);
} catch (error) {
    process.stderr.write(`build:llama: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
}

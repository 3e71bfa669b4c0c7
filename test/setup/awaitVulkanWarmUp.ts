// Runs before each file of the projects whose global setup warms Mesa's shader cache (vulkanShaderCache.ts): waits
// until that warm-up has ended, so that it never runs beside a file that holds a claim on the clock. Once it has
// ended (usually long before: it starts with the run), this is one stat a file.
import fs from "node:fs";
import {inject} from "vitest";

/** Longer than the warm-up takes alone on an empty cache (33-51 s on two cores); past this a file goes on without it. */
const longestWaitMs = 180_000;

const endedFile = inject("vulkanWarmUpEndedFile");
if (endedFile != null && !fs.existsSync(endedFile)) {
    const started = performance.now();
    while (!fs.existsSync(endedFile) && performance.now() - started < longestWaitMs)
        await new Promise((resolve) => setTimeout(resolve, 100));
    const waitedMs = Math.round(performance.now() - started);
    console.info(fs.existsSync(endedFile)
        ? `[setup] waited ${waitedMs} ms for the Vulkan shader warm-up to end`
        : `[setup] the Vulkan shader warm-up has not ended after ${waitedMs} ms: going on beside it`);
}

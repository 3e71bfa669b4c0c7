import {describe, expect, it} from "vitest";
import {defaultServeParallel, serveThreadpoolSize} from "../../bin/serveThreadpoolSize.cjs";
import {defaultApiParallel} from "../../src/serve/startApiServer.js";
import {describeServeThreading, serveThreadsInAll} from "../../src/serve/serveThreading.js";

describe("cleanroom serve's libuv pool and threads", () => {
    it("serve's pool is --parallel capped at the cores (default: --parallel's own default); every other command gets none of its own (the core's pool of 1)", () => {
        expect(defaultServeParallel).toBe(defaultApiParallel);
        expect(serveThreadpoolSize(["serve", "--model", "m.gguf"], 2)).toBe(2);
        expect(serveThreadpoolSize(["serve", "--model", "m.gguf"], 8)).toBe(defaultApiParallel);
        expect(serveThreadpoolSize(["serve", "--parallel", "3", "--port", "0"], 8)).toBe(3);
        expect(serveThreadpoolSize(["serve", "--parallel=6"], 4)).toBe(4);
        expect(serveThreadpoolSize(["serve", "--parallel", "1"], 8)).toBe(1);
        // The last one given, as commander takes it; a value commander refuses leaves the default (serve then exits on it).
        expect(serveThreadpoolSize(["serve", "--parallel", "1", "--parallel", "8"], 8)).toBe(8);
        expect(serveThreadpoolSize(["serve", "--parallel", "many"], 8)).toBe(defaultApiParallel);
        expect(serveThreadpoolSize(["serve", "--parallel", "0"], 8)).toBe(defaultApiParallel);
        expect(serveThreadpoolSize(["serve"], 1)).toBe(1);

        for (const command of [["chat", "--prompt", "serve"], ["selftest"], ["settings", "serve"], ["--json", "chat"], []])
            expect(serveThreadpoolSize(command, 8), command.join(" ")).toBeNull();
    });

    it("caps the threads of decodes running at once at the cores only when more than one can run, and says so on serve's startup line", () => {
        expect(serveThreadsInAll(1, 2)).toBeNull();
        expect(serveThreadsInAll(2, 2)).toBe(2);
        expect(serveThreadsInAll(4, 8)).toBe(8);

        expect(describeServeThreading({threadpoolSize: 2, parallel: 8, threadsPerContext: 2, threadsInAll: 2})).toBe(
            "Threads: libuv pool 2 (up to 2 requests decode at once), 2 threads per context decoding alone, at most 2 in all (shared among the requests decoding at once)");
        expect(describeServeThreading({threadpoolSize: 1, parallel: 4, threadsPerContext: 1, threadsInAll: null})).toBe(
            "Threads: libuv pool 1 (one request decodes at a time), 1 thread per context");
        // A pool of 2 for a server that serves one request at a time.
        expect(describeServeThreading({threadpoolSize: 2, parallel: 1, threadsPerContext: 2, threadsInAll: 2})).toBe(
            "Threads: libuv pool 2 (one request decodes at a time), 2 threads per context");
    });
});

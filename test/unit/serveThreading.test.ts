import {describe, expect, it} from "vitest";
import {describeServeThreading, serveThreadsInAll} from "../../src/serve/serveThreading.js";

describe("cleanroom serve's threads", () => {
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

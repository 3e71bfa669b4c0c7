import {CanaryScanner} from "../src/core/common/cloud/CanaryScanner.js";
import {createCanary, hashCanary} from "../src/core/common/cloud/canary.js";
import {FingerprintIndex} from "../src/core/common/cloud/fingerprints.js";
import type {PlantedCanary} from "../src/core/common/cloud/types.js";
import {fillerText} from "../tools/endpointAudit/fillerText.js";
import {median, round} from "./stats.js";

export type ScannerFigures = {
    replyBytes: number,
    fingerprints: number,
    byChunk: Array<{chunkChars: number, megabytesPerSecond: number, microsecondsPerChunk: number}>
};

/** The canary scanner's cost: throughput, and the latency it adds per streamed chunk. */
export function benchScanner(): ScannerFigures {
    let state = 12345;
    const random = () => {
        state = (state * 1664525 + 1013904223) >>> 0;
        return state / 2 ** 32;
    };
    const planted = new Map<string, PlantedCanary>();
    for (let index = 0; index < 200; index++)
        planted.set(hashCanary(createCanary()), {conversationId: `c${index % 20}`, requestId: `r${index}`});
    const index = new FingerprintIndex({key: new Uint8Array(32).fill(42)});
    for (let conversation = 0; conversation < 50; conversation++)
        index.addConversation([fillerText(random, 20_000)]);
    // A reply that matches nothing, so the whole of it is scanned (a blocked reply stops early).
    const words = ["river", "lantern", "quietly", "seven", "orange", "bicycle", "under", "meadow", "whistle", "copper", "gently", "north"];
    let reply = "";
    while (reply.length < 1 << 20)
        reply += words[Math.floor(random() * words.length)] + (random() < 0.1 ? ". " : " ");
    const fingerprints = index.excluding([]);

    const byChunk = [4, 16, 4096].map((chunkChars) => {
        const runs: number[] = [];
        for (let run = 0; run < 3; run++) {
            const scanner = new CanaryScanner({conversationId: "c0", requestId: "now", book: {lookup: (hash) => planted.get(hash)}, fingerprints});
            const started = performance.now();
            for (let offset = 0; offset < reply.length && !scanner.blocked; offset += chunkChars)
                scanner.feed(reply.slice(offset, offset + chunkChars));
            scanner.finish();
            runs.push(performance.now() - started);
            if (scanner.blocked)
                throw new Error("the benchmark reply was blocked: it must match nothing");
        }
        const ms = median(runs);
        const chunks = Math.ceil(reply.length / chunkChars);
        return {chunkChars, megabytesPerSecond: round(reply.length / 1e6 / (ms / 1000), 2), microsecondsPerChunk: round(ms * 1000 / chunks, 3)};
    });
    return {replyBytes: reply.length, fingerprints: index.size, byChunk};
}

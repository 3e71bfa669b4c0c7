import {promptOf, streamOne, type BenchApi} from "./benchEndpoint.js";

export type ScrubOffPathOptions = {
    baseURL: string,
    model: string,
    /** Defaults to `chat`. */
    api?: BenchApi,
    maxTokens: number,
    /** More fields of each request's body (see `EndpointBenchOptions.extraBody`). */
    extraBody?: Record<string, unknown>,
    /** Requests in each mode, one client sending one after another. */
    requests: number,
    /**
     * Resolves once the server reported the context of the request with this response id scrubbed
     * (`cleanroom serve` logs a line per request after its scrub), with when that was read
     * (`performance.now()`). Defaults to none: a server with no scrub (llama-server), measured back to back only.
     */
    scrubbed?: (responseId: string) => Promise<number>
};

export type ScrubOffPathResult = {
    requests: number,
    /** Time to first token of a request sent the moment the previous reply ended (its context's scrub then running), in ms. */
    nextTtftScrubRunningMs: {median: number, p95: number},
    /** The same, the request sent only once the previous context was reported scrubbed (no scrub running). Null without `scrubbed`. */
    nextTtftScrubDoneMs: {median: number, p95: number} | null,
    /** How long after a reply's end the server reported its context scrubbed: above 0 the scrub was not on the reply's path (before, it was). Null without `scrubbed`. */
    scrubReportedAfterReplyMs: {median: number, p95: number} | null,
    /**
     * What the previous request's scrub costs the next one: the median next time to first token with
     * the scrub running less the median once it was done, in ms (about 0, within the noise, when the
     * scrub is off the next request's critical path). Null without `scrubbed`.
     */
    scrubCostToNextTtftMs: number | null
};

/**
 * Is the per-request scrub off the next request's critical path? One client sends requests one
 * after another: first each the moment the previous reply ended (its scrub still running), then
 * each once the previous context was reported scrubbed. The two medians of the next request's
 * time to first token differ by what the scrub costs the next request.
 */
export async function measureScrubOffPath(options: ScrubOffPathOptions): Promise<ScrubOffPathResult> {
    const scrubRunning: number[] = [];
    const scrubDone: number[] = [];
    const reportedAfter: number[] = [];
    // Clients of its own (promptOf): prompts no other run of the bench sent.
    const send = (index: number) => streamOne(options, promptOf(2000 + index, index));
    await send(0);
    for (let index = 1; index <= options.requests; index++) {
        const {ttftMs} = await send(index);
        if (ttftMs != null)
            scrubRunning.push(ttftMs);
    }
    const scrubbed = options.scrubbed;
    if (scrubbed != null)
        for (let index = 0; index <= options.requests; index++) {
            const reply = await send(options.requests + 1 + index);
            if (index > 0 && reply.ttftMs != null)
                scrubDone.push(reply.ttftMs);
            if (reply.id == null)
                throw new Error("the server's stream carried no response id");
            reportedAfter.push(await scrubbed(reply.id) - reply.endedAt);
        }
    const running = summary(scrubRunning);
    const done = scrubbed == null ? null : summary(scrubDone);
    return {
        requests: options.requests,
        nextTtftScrubRunningMs: running,
        nextTtftScrubDoneMs: done,
        scrubReportedAfterReplyMs: scrubbed == null ? null : summary(reportedAfter),
        scrubCostToNextTtftMs: done == null ? null : Math.round((running.median - done.median) * 100) / 100
    };
}

function summary(values: number[]) {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (share: number) => sorted.length === 0 ? NaN : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]! * 100) / 100;
    return {median: at(0.5), p95: at(0.95)};
}

export const simModes = ["honest", "incident", "random-leak", "paraphrase", "truncate", "faulty"] as const;
/**
 * - `honest`: generates with the real model, isolates tenants (pages zeroed after each
 *   request), refuses what does not fit with HTTP 400 `context_length_exceeded`.
 * - `incident`: the October 2026 bug. Advertises more context than the page pool holds;
 *   requests that do not fit the pool are not refused, and the reply carries stale pages of
 *   earlier requests (other tenants'), all with HTTP 200.
 * - `random-leak`: a stale run of pages of an earlier request leaks at `leakRate`.
 * - `paraphrase`: as `random-leak`, with the leak's case, spacing and punctuation mangled.
 * - `truncate`: drops the start of long prompts and reports the truncated usage.
 * - `faulty`: 5xx, stalls, cut streams and malformed events, in turn.
 */
export type SimMode = typeof simModes[number];

export const simFaults = ["server-error", "stall", "cut-stream", "malformed-event", "none"] as const;
export type SimFault = typeof simFaults[number];

export type SharedCloudSimulatorOptions = {
    mode: SimMode,
    /** Port on 127.0.0.1. Defaults to `0` (any free port). */
    port?: number,
    /** Seeds every choice the simulator makes (leaks, faults, chunking). Defaults to `1`. */
    seed?: number,
    /**
     * GGUF model to generate with and count tokens by. Defaults to none: a synthetic,
     * seeded word generator and about one token per 3.5 characters.
     */
    modelPath?: string,
    /** Tokens of KV memory shared by all tenants. Defaults to `4096`. */
    poolTokens?: number,
    /** Tokens per KV page. Defaults to `64`. */
    pageTokens?: number,
    /**
     * Context length the server advertises and enforces. Defaults to `poolTokens`, and for
     * `incident` to `poolTokens` scaled by 1M/681K (the incident's configured vs real memory).
     * In `honest` mode it is never more than `poolTokens`.
     */
    advertisedContext?: number,
    /** Chance per request of a leak in `random-leak` and `paraphrase` modes. Defaults to `0.1`. */
    leakRate?: number,
    /** Most consecutive pages in one leaked fragment. Defaults to `4`. */
    leakPages?: number,
    /** Most leaked fragments in one `incident` reply. Defaults to `2`. */
    leakFragments?: number,
    /** `truncate` mode: prompts longer than this are truncated. Defaults to `256`. */
    truncateAboveTokens?: number,
    /** `truncate` mode: share of the prompt kept (its end). Defaults to `0.4`. */
    truncateKeepRatio?: number,
    /** `faulty` mode: faults taken in turn, request by request. Defaults to every fault but `none`. */
    faults?: readonly SimFault[],
    /** How long a stalled response is held open before the socket is destroyed. Defaults to `30000` ms. */
    stallMs?: number,
    /** The one model id served. Defaults to `"cleanroom-sim"`. */
    modelName?: string,
    /** `max_tokens` when the request gives none. Defaults to `64`. */
    defaultMaxTokens?: number,
    /**
     * `echo`: the reply is `You said: ` and the last message, whole, instead of generated text (so
     * a test can see what arrived come back, e.g. a redacted secret's placeholder). Defaults to `generate`.
     */
    reply?: "generate" | "echo",
    /**
     * Other tenants whose requests are in the shared KV memory from the start, as on a real
     * shared server: each wrote one request of private-looking text carrying canaries of another
     * install (one per about 100 characters), so that any stale page of theirs that leaks is
     * recognisable. Defaults to `0` (the `sim-cloud` command uses 3 in the leaking modes).
     */
    otherTenants?: number,
    /**
     * `accept`: takes vLLM's `cache_salt` (recorded per request); `reject`: refuses it with HTTP 400
     * as an endpoint that refuses unknown fields does (OpenAI's own wording). Defaults to `accept`.
     */
    cacheSalt?: "accept" | "reject"
};

/** A leaked fragment, for tests to check what leaked from whom. */
export type SimLeak = {
    tenant: string,
    requestId: string,
    pages: number,
    mangled: boolean,
    /** The leaked fragment as it stood in the earlier request (before any mangling): ground truth for tests. */
    sourceText: string
};

/** The simulator's own record of one request (ground truth for detection-rate runs). */
export type SimRequestRecord = {
    requestId: string,
    tenant: string,
    status: number,
    stream: boolean,
    promptTokens: number,
    reportedPromptTokens: number | null,
    maxTokens: number,
    /** Did not fit the page pool. */
    overflowed: boolean,
    truncated: boolean,
    fault: SimFault | null,
    leaks: SimLeak[],
    /** The request's `cache_salt`, null when it sent none. */
    cacheSalt: string | null
};

/** Every HTTP request the simulator received, as it arrived: what a server on the other end would have seen. */
export type SimReceivedRequest = {
    method: string,
    path: string,
    /** The body as received, decoded as UTF-8 (empty for a GET). */
    body: string
};

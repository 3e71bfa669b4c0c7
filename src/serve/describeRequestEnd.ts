import {describeErrorLocally, isCleanroomError} from "../core/common/errors.js";
import type {ScrubReport} from "../core/common/types.js";
import type {ApiEmbeddingResult} from "../core/node/turns/ApiEmbeddingService.js";
import type {ApiCacheEnd} from "../core/node/turns/ApiRequestService.js";
import type {ApiRequestReport} from "./createApiApp.js";

/**
 * One line per request for the server's log: who asked, what it cost, and its context's scrub (never
 * prompt or reply text). The log is local, so an error without a Cleanroom code shows its detail.
 */
export function describeRequestEnd({requestId, tenant, result, error}: ApiRequestReport) {
    if (result == null)
        return `${requestId} (${tenant}): failed: ${describeLocally(error)}`;
    const {scrub, cache} = result;
    const cached = result.cachedTokens > 0 ? ` (${result.cachedTokens} cached)` : "";
    return `${requestId} (${tenant}): ${result.promptTokens} prompt${cached} + ${result.completionTokens} reply tokens, ${result.finishReason}; ` +
        (scrub != null ? describeScrub(scrub)
            : cache != null ? `context kept in ${cache.sessionId} for its cache_salt (scrubbed after ${formatSeconds(cache.idleMs)} idle)` : "context kept");
}

/** One line per answered embeddings request: who asked, its tokens and vectors, and its embedding context's scrub (never the texts). */
export function describeEmbeddingsEnd(tenant: string, {requestId, vectors, promptTokens, scrub}: ApiEmbeddingResult) {
    const kept = scrub.method === "no-kv-memory"
        ? `context ${scrub.contextId} scrubbed, verified (no KV memory: its state read back empty)`
        : describeScrub(scrub);
    return `${requestId} (${tenant}): embeddings, ${promptTokens} input tokens → ${vectors.length} ${vectors.length === 1 ? "vector" : "vectors"}; ${kept}`;
}

/** One line for a `cache_salt` reuse cache that ended: idle, at shutdown, or its key revoked. */
export function describeCacheEnd({sessionId, tenant, reason, scrub, error}: ApiCacheEnd) {
    const why = reason === "idle" ? "idle" : reason === "revoked" ? "its key was revoked" : "the server is stopping";
    if (error != null)
        return `${sessionId} (${tenant}): cache_salt cache ended (${why}): ${describeLocally(error)}`;
    return `${sessionId} (${tenant}): cache_salt cache ended (${why}); ` + (scrub != null ? describeScrub(scrub) : "its context was already scrubbed (evicted or failed)");
}

function describeLocally(error: unknown) {
    return isCleanroomError(error) ? error.message : describeErrorLocally(error);
}

function describeScrub(scrub: Pick<ScrubReport, "contextId" | "verified" | "bytesChecked" | "nonZeroBytes">) {
    return `context ${scrub.contextId} scrubbed, ${scrub.verified ? "verified" : "NOT verified"} (${scrub.bytesChecked} bytes checked, ${scrub.nonZeroBytes} non-zero)`;
}

function formatSeconds(ms: number) {
    return `${Math.round(ms / 100) / 10} s`;
}

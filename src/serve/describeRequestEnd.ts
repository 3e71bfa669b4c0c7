import {describeErrorLocally, isCleanroomError} from "../core/common/errors.js";
import type {ApiRequestReport} from "./createApiApp.js";

/**
 * One line per request for the server's log: who asked, what it cost, and its context's scrub (never
 * prompt or reply text). The log is local, so an error without a Cleanroom code shows its detail.
 */
export function describeRequestEnd({requestId, tenant, result, error}: ApiRequestReport) {
    if (result == null)
        return `${requestId} (${tenant}): failed: ${isCleanroomError(error) ? error.message : describeErrorLocally(error)}`;
    const {scrub} = result;
    return `${requestId} (${tenant}): ${result.promptTokens} prompt + ${result.completionTokens} reply tokens, ${result.finishReason}; ` +
        `context ${scrub.contextId} scrubbed, ${scrub.verified ? "verified" : "NOT verified"} (${scrub.bytesChecked} bytes checked, ${scrub.nonZeroBytes} non-zero)`;
}

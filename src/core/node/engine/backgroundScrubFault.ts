import type {BackgroundScrubFault} from "../../common/api/events.js";
import {ScrubUnverifiedError} from "../../common/errors.js";
import type {SessionEndReason} from "../../common/types.js";
import type {PooledSessionEnd} from "./ContextPool.js";

/**
 * Why sessions end with no call waiting for them: evicted for another conversation's context, idle
 * too long, or ended because another model was loaded. Any other end is a call's (a close, a
 * delete, a cancelled or failed turn, the shutdown), which gets `SCRUB_UNVERIFIED` itself.
 */
const backgroundEndReasons: ReadonlySet<SessionEndReason> = new Set(["evict", "idle", "unload"]);

/** The fault to tell the user about when a session that ended in the background could not be verified scrubbed; null otherwise. */
export function backgroundScrubFault(end: PooledSessionEnd): BackgroundScrubFault | null {
    if (end.verified || !backgroundEndReasons.has(end.reason))
        return null;
    return {conversationId: end.conversationId, contextId: end.contextId, reason: end.reason, error: new ScrubUnverifiedError(end).toWire()};
}

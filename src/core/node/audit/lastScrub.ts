import type {AuditEventOf} from "../../common/api/auditEvents.js";
import type {IsolationReport} from "../../common/api/types.js";
import type {ConversationId} from "../../common/types.js";
import type {AuditLog} from "./AuditLog.js";

/** A scrub as its conversation's trail recorded it, and when. */
export type RecordedScrub = NonNullable<IsolationReport["lastScrub"]>;

export type LastScrubQuery = {
    /** Only scrubs of the conversation's own context, not those of embedding contexts its turns used. Defaults to `false`. */
    ownContext?: boolean,
    /** Only scrubs recorded at or after this time (ms since the epoch). Defaults to any time. */
    since?: number
};

const scrubKinds: Array<"scrub.verified" | "scrub.failed"> = ["scrub.verified", "scrub.failed"];

/** Reads a recorded scrub back: its facts, whether it was verified (its kind), and when. */
export function recordedScrubOf({kind, data, at}: AuditEventOf<"scrub.verified" | "scrub.failed">): RecordedScrub {
    return {...data, verified: kind === "scrub.verified", at};
}

/**
 * The conversation's last scrub, from its audit trail: the one source of it, since every session
 * end's scrub is recorded there as it happens (`scrubFactsOf`), an incognito conversation's in its
 * in-memory trail. Null when there is none.
 */
export function lastScrubOf(audit: AuditLog, conversationId: ConversationId, {ownContext = false, since}: LastScrubQuery = {}): RecordedScrub | null {
    const everyScrub = ownContext || since != null;
    const last = audit.events({conversationId, kinds: scrubKinds, limit: everyScrub ? null : 1})
        .findLast((event) => (!ownContext || event.data.purpose !== "embedding") && (since == null || event.at >= since));
    return last == null ? null : recordedScrubOf(last);
}

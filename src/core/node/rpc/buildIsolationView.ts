import type {CanaryCounts, IsolationReportView, TurnRoute} from "../../common/api/index.js";
import type {AuditEvent, ConversationId} from "../../common/types.js";
import type {Core} from "../Core.js";

/** The core's isolation report plus what the Isolation panel shows: each turn's route and the canary counters. */
export function buildIsolationView(core: Core, conversationId: ConversationId): IsolationReportView {
    const report = core.isolationReport(conversationId);
    return {
        ...report,
        turns: report.events.filter((event) => event.kind === "turn.local" || event.kind === "turn.cloud").map(turnRouteOf),
        canaries: canaryCountsOf(report)
    };
}

type CoreCloudCounts = {canariesPlanted: number, checksPassed: number, blocked: number, flagged: number};

function turnRouteOf(event: AuditEvent): TurnRoute {
    return {
        messageId: typeof event.data.messageId === "number" ? event.data.messageId : null,
        route: event.kind === "turn.cloud" ? "cloud" : "local",
        contextId: typeof event.data.contextId === "string" ? event.data.contextId : null,
        at: event.at
    };
}

/**
 * The core's cloud counters when its report has them; else counted from the audit trail
 * (`turn.cloud` with `canariesPlanted`, passing when neither blocked nor flagged; `cloud.blocked`; `cloud.flagged`).
 */
export function canaryCountsOf(report: {events: AuditEvent[]}): CanaryCounts {
    const cloud = (report as {cloud?: CoreCloudCounts}).cloud;
    if (cloud != null)
        return {planted: cloud.canariesPlanted, checksPassed: cloud.checksPassed, repliesBlocked: cloud.blocked, repliesFlagged: cloud.flagged};

    let planted = 0;
    let checksPassed = 0;
    let repliesBlocked = 0;
    let repliesFlagged = 0;
    for (const event of report.events) {
        if (event.kind === "turn.cloud") {
            planted += typeof event.data.canariesPlanted === "number" ? event.data.canariesPlanted : 0;
            if (event.data.blocked === false && event.data.verdict == null)
                checksPassed++;
        } else if (event.kind === "cloud.blocked")
            repliesBlocked++;
        else if (event.kind === "cloud.flagged")
            repliesFlagged++;
    }
    return {planted, checksPassed, repliesBlocked, repliesFlagged};
}

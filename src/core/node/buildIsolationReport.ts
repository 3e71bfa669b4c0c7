import type {ConversationId} from "../common/types.js";
import type {IsolationReport} from "../common/api/types.js";
import {lastScrubOf} from "./audit/lastScrub.js";
import type {ConversationServices} from "./createConversationServices.js";
import type {ContextSnapshot} from "./engine/ConversationContext.js";

/**
 * What the Isolation panel shows of a conversation: its live context (if any), the last scrub,
 * counters and each turn's route from its whole audit trail (SQL), the newest events for display.
 */
export function buildIsolationReport(conversationId: ConversationId, {audit, canaries, replySources}: Pick<ConversationServices, "audit" | "canaries" | "replySources">,
    live: ContextSnapshot | null): IsolationReport {
    const events = audit.events({conversationId});
    const {byKind, cloudChecksPassed} = audit.counts(conversationId);
    const count = (kind: string) => byKind[kind] ?? 0;
    return {
        conversationId,
        live,
        lastScrub: lastScrubOf(audit, conversationId),
        scrubs: {verified: count("scrub.verified"), failed: count("scrub.failed")},
        refusals: count("turn.refused"),
        routes: {local: count("turn.local"), cloud: count("turn.cloud")},
        turns: audit.events({conversationId, kinds: ["turn.local", "turn.cloud"], limit: null}).map((event) => ({
            messageId: event.data.messageId ?? null,
            route: event.kind === "turn.cloud" ? "cloud" as const : "local" as const,
            contextId: event.kind === "turn.local" ? event.data.contextId : null,
            at: event.at
        })),
        canaries: {
            planted: canaries.count(conversationId),
            checksPassed: cloudChecksPassed,
            repliesBlocked: count("cloud.blocked"),
            repliesFlagged: count("cloud.flagged")
        },
        documents: replySources.isolationDocuments(conversationId),
        events
    };
}

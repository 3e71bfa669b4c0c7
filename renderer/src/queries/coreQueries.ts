import {queryOptions} from "@tanstack/react-query";
import type {CoreClient} from "../../../src/core/common/rpc/index.js";
import {queryKeys} from "./queryKeys.js";

/** The sidebar's list; asked once the link to the core is up. */
export function conversationListQuery(client: CoreClient, connected: boolean) {
    return queryOptions({queryKey: queryKeys.conversations, queryFn: () => client.call("conversations.list", {}), enabled: connected});
}

/**
 * One conversation, under its own key: its answer can only ever land there, so a slow answer for a
 * conversation left never shows in the one open now. A conversation left is dropped from the cache
 * (`gcTime` 0): opened again, it is read afresh (its draft, its messages).
 */
export function conversationQuery(client: CoreClient, conversationId: string | null, connected: boolean) {
    return queryOptions({
        queryKey: queryKeys.conversation(conversationId ?? ""),
        queryFn: () => client.call("conversations.get", {conversationId: conversationId!}),
        enabled: connected && conversationId != null,
        gcTime: 0
    });
}

/** One conversation's isolation report, under its own key; a report that cannot be read (the conversation just went) shows as none. */
export function isolationQuery(client: CoreClient, conversationId: string | null, connected: boolean) {
    return queryOptions({
        queryKey: queryKeys.isolation(conversationId ?? ""),
        queryFn: () => client.call("isolation.report", {conversationId: conversationId!}).catch(() => null),
        enabled: connected && conversationId != null,
        gcTime: 0
    });
}

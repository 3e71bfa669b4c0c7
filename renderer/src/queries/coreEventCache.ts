import type {QueryClient} from "@tanstack/react-query";
import type {ApiEvent, ApiEventPayload, ApiOutput, TurnResult} from "../../../src/core/common/api/index.js";
import type {Message} from "../../../src/core/common/types.js";
import {queryKeys} from "./queryKeys.js";

export type OpenConversation = ApiOutput<"conversations.get">;

/** The core events that change what the cache holds. */
export const cacheEvents = ["turn.started", "message.text", "turn.finished", "turn.error", "audit.event", "core.status", "models.downloadProgress"] as const satisfies ApiEvent[];
export type CacheEvent = typeof cacheEvents[number];

/**
 * What a core event does to the cache: data it carries is written in (`setQueryData`) under the key
 * of the conversation it names, and what it makes stale is marked so (`invalidateQueries`; only the
 * queries shown are asked again). A reconnect (`core.status` restarted) marks everything stale, once.
 */
export function applyCoreEvent<E extends CacheEvent>(queryClient: QueryClient, event: E, payload: ApiEventPayload<E>): void {
    const apply = cacheUpdates[event] as (queryClient: QueryClient, payload: ApiEventPayload<E>) => void;
    apply(queryClient, payload);
}

const cacheUpdates: {[E in CacheEvent]: (queryClient: QueryClient, payload: ApiEventPayload<E>) => void} = {
    "turn.started": (queryClient, {conversationId}) => {
        updateConversation(queryClient, conversationId, (open) => ({...open, generating: true}));
        void queryClient.invalidateQueries({queryKey: queryKeys.conversation(conversationId)});
    },
    "message.text": (queryClient, {conversationId, messageId, text}) => {
        updateConversation(queryClient, conversationId, (open) => ({...open, messages: appendText(open.messages, messageId, text)}));
    },
    "turn.finished": (queryClient, result) => {
        // A blocked reply's streamed text goes at once, before the stored (empty) version arrives.
        updateConversation(queryClient, result.conversationId, (open) => ({
            ...open, generating: false, messages: result.status === "blocked" ? markBlocked(open.messages, result) : open.messages
        }));
        void queryClient.invalidateQueries({queryKey: queryKeys.conversation(result.conversationId)});
        void queryClient.invalidateQueries({queryKey: queryKeys.conversations});
    },
    "turn.error": (queryClient, {conversationId}) => {
        updateConversation(queryClient, conversationId, (open) => ({...open, generating: false}));
        void queryClient.invalidateQueries({queryKey: queryKeys.conversation(conversationId)});
    },
    "audit.event": (queryClient, {conversationId}) => {
        if (conversationId != null)
            void queryClient.invalidateQueries({queryKey: queryKeys.isolation(conversationId)});
    },
    "core.status": (queryClient, status) => {
        if (status.state === "restarted")
            void queryClient.invalidateQueries();
        else if (status.model != null)
            queryClient.setQueryData(queryKeys.model, status.model);
    },
    "models.downloadProgress": (queryClient, {state}) => {
        if (state === "done")
            void queryClient.invalidateQueries({queryKey: queryKeys.modelLibrary});
    }
};

/** Changes a conversation's cached copy, if there is one (nothing is cached for a conversation never opened). */
export function updateConversation(queryClient: QueryClient, conversationId: string, update: (open: OpenConversation) => OpenConversation) {
    queryClient.setQueryData<OpenConversation>(queryKeys.conversation(conversationId), (open) => open == null ? open : update(open));
}

export function appendText(messages: Message[], messageId: number, text: string): Message[] {
    const index = messages.findIndex((message) => message.id === messageId);
    if (index < 0)
        return messages;
    const next = [...messages];
    next[index] = {...messages[index]!, content: messages[index]!.content + text, status: "streaming"};
    return next;
}

export function markBlocked(messages: Message[], result: TurnResult): Message[] {
    return messages.map((message) => message.id !== result.assistantMessageId ? message : {
        ...message, content: "", status: "blocked", verdict: (result.route === "cloud" ? result.cloud.verdict : null) ?? message.verdict ?? null
    });
}

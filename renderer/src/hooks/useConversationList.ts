import {useQuery, useQueryClient} from "@tanstack/react-query";
import {useCallback, useRef} from "react";
import type {ApiInput, ApiMethod, ApiOutput} from "../../../src/core/common/api/index.js";
import type {ConversationPolicy} from "../../../src/core/common/types.js";
import {conversationListQuery} from "../queries/coreQueries.js";
import {queryKeys} from "../queries/queryKeys.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useConnected} from "./useConnected.js";
import {useReportError} from "./useReportError.js";

export type ConversationListItem = ApiOutput<"conversations.list">[number];

const noConversations: ConversationListItem[] = [];

/** The sidebar's conversations (the `conversations` query: asked again when a turn finishes, after each change, on reconnect). */
export function useConversationList(client: AppCoreClient, onError: (error: unknown) => void) {
    const queryClient = useQueryClient();
    const connected = useConnected(client);
    const list = useQuery(conversationListQuery(client, connected));
    useReportError(list.error, onError);
    const openingFirst = useRef<Promise<{id: string}> | null>(null);

    const refresh = useCallback(() => queryClient.invalidateQueries({queryKey: queryKeys.conversations}), [queryClient]);

    /** A call that changes the list, then the list as it is after it (and the conversation it changed); the call's answer. */
    const callThenRefresh = useCallback(async <M extends ApiMethod>(method: M, input: ApiInput<M>, changed?: string): Promise<ApiOutput<M>> => {
        const answer = await client.call(method, input);
        await Promise.all([
            refresh(),
            changed != null ? queryClient.invalidateQueries({queryKey: queryKeys.conversation(changed)}) : undefined
        ]);
        return answer;
    }, [client, queryClient, refresh]);

    /** A new conversation; `incognito`: held in the core's memory only, never written to disk. */
    const create = useCallback(async ({incognito = false}: {incognito?: boolean} = {}) =>
        await callThenRefresh("conversations.create", incognito ? {incognito} : {}), [callThenRefresh]);

    /**
     * The conversation to open when none is: the most recent, or (none) a new one, decided in the core in
     * one call (another window or a reload opening at the same time gets the same one). Single-flight
     * here as well: the app's effects that overlap share one answer.
     */
    const openMostRecentOrCreate = useCallback(async () => {
        openingFirst.current ??= (async () => {
            const conversation = await client.call("conversations.latestOrNew", {});
            await refresh();
            return conversation;
        })().finally(() => openingFirst.current = null);
        return await openingFirst.current;
    }, [client, refresh]);

    const rename = useCallback(async (conversationId: string, title: string) =>
        void await callThenRefresh("conversations.rename", {conversationId, title}, conversationId), [callThenRefresh]);

    const setPolicy = useCallback(async (conversationId: string, policy: ConversationPolicy) =>
        void await callThenRefresh("conversations.setPolicy", {conversationId, policy}, conversationId), [callThenRefresh]);

    /** Deletes a conversation; `purge: "pending"` while another reader keeps its text in the database file. */
    const remove = useCallback(async (conversationId: string) =>
        await callThenRefresh("conversations.delete", {conversationId}), [callThenRefresh]);

    const pin = useCallback(async (conversationId: string, pinned: boolean) =>
        void await callThenRefresh("conversations.pin", {conversationId, pinned}), [callThenRefresh]);

    /** Deletion that can be undone: scrubbed and out of the list now, deleted by `remove` later. */
    const trash = useCallback(async (conversationId: string) =>
        await callThenRefresh("conversations.trash", {conversationId}), [callThenRefresh]);

    const restore = useCallback(async (conversationId: string) =>
        await callThenRefresh("conversations.restore", {conversationId}), [callThenRefresh]);

    /** Conversations whose title or shown messages contain the words of `query` (the core's full-text search); none when the call fails. */
    const search = useCallback(async (query: string) => await client.call("conversations.search", {text: query}).catch((error: unknown) => {
        onError(error);
        return [];
    }), [client, onError]);

    return {
        conversations: list.data ?? noConversations, loaded: list.data !== undefined, refresh,
        create, openMostRecentOrCreate, rename, setPolicy, remove, pin, trash, restore, search
    };
}

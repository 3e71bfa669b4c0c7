import {useCallback, useEffect, useRef, useState} from "react";
import type {ApiInput, ApiMethod, ApiOutput} from "../../../src/core/common/api/index.js";
import type {ConversationPolicy} from "../../../src/core/common/types.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

export type ConversationListItem = ApiOutput<"conversations.list">[number];

/** The sidebar's conversations, refreshed when turns finish and on reconnect. */
export function useConversationList(client: AppCoreClient, onError: (error: unknown) => void) {
    const [conversations, setConversations] = useState<ConversationListItem[]>([]);
    const [loaded, setLoaded] = useState(false);
    const latestRequest = useRef(0);
    const openingFirst = useRef<Promise<{id: string}> | null>(null);

    /** Lists again; an answer overtaken by a later request is dropped, so an older, slower list never replaces a newer one. */
    const refresh = useCallback(async () => {
        const request = ++latestRequest.current;
        try {
            const answer = await client.call("conversations.list", {});
            if (request === latestRequest.current) {
                setConversations(answer);
                setLoaded(true);
            }
            return answer;
        } catch (error) {
            onError(error);
            return null;
        }
    }, [client, onError]);

    useEffect(() => {
        if (client.connection === "connected")
            void refresh();
        return client.onConnectionChange((state) => {
            if (state === "connected")
                void refresh();
        });
    }, [client, refresh]);
    useCoreEvent(client, "turn.finished", () => void refresh());

    /** A call that changes the list, then the list as it is after it; the call's answer. */
    const callThenRefresh = useCallback(async <M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>> => {
        const answer = await client.call(method, input);
        await refresh();
        return answer;
    }, [client, refresh]);

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
        void await callThenRefresh("conversations.rename", {conversationId, title}), [callThenRefresh]);

    const setPolicy = useCallback(async (conversationId: string, policy: ConversationPolicy) =>
        void await callThenRefresh("conversations.setPolicy", {conversationId, policy}), [callThenRefresh]);

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

    return {conversations, loaded, refresh, create, openMostRecentOrCreate, rename, setPolicy, remove, pin, trash, restore, search};
}

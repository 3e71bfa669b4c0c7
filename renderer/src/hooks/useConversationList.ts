import {useCallback, useEffect, useState} from "react";
import type {ApiOutput} from "../../../src/core/common/api/index.js";
import type {ConversationPolicy} from "../../../src/core/common/types.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

export type ConversationListItem = ApiOutput<"conversations.list">[number];

/** The sidebar's conversations, refreshed when turns finish and on reconnect. */
export function useConversationList(client: AppCoreClient, onError: (error: unknown) => void) {
    const [conversations, setConversations] = useState<ConversationListItem[]>([]);
    const [loaded, setLoaded] = useState(false);

    const refresh = useCallback(async () => {
        try {
            setConversations(await client.call("conversations.list", {}));
            setLoaded(true);
        } catch (error) {
            onError(error);
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

    const create = useCallback(async () => {
        const conversation = await client.call("conversations.create", {});
        await refresh();
        return conversation;
    }, [client, refresh]);

    const rename = useCallback(async (conversationId: string, title: string) => {
        await client.call("conversations.rename", {conversationId, title});
        await refresh();
    }, [client, refresh]);

    const setPolicy = useCallback(async (conversationId: string, policy: ConversationPolicy) => {
        await client.call("conversations.setPolicy", {conversationId, policy});
        await refresh();
    }, [client, refresh]);

    /** Deletes a conversation; `purge: "pending"` while another reader keeps its text in the database file. */
    const remove = useCallback(async (conversationId: string) => {
        const result = await client.call("conversations.delete", {conversationId});
        await refresh();
        return result;
    }, [client, refresh]);

    const pin = useCallback(async (conversationId: string, pinned: boolean) => {
        await client.call("conversations.pin", {conversationId, pinned});
        await refresh();
    }, [client, refresh]);

    /** Deletion that can be undone: scrubbed and out of the list now, deleted by `remove` later. */
    const trash = useCallback(async (conversationId: string) => {
        const result = await client.call("conversations.trash", {conversationId});
        await refresh();
        return result;
    }, [client, refresh]);

    const restore = useCallback(async (conversationId: string) => {
        const conversation = await client.call("conversations.restore", {conversationId});
        await refresh();
        return conversation;
    }, [client, refresh]);

    /** Conversations whose title or shown messages contain the words of `query` (the core's full-text search); none when the call fails. */
    const search = useCallback(async (query: string) => await client.call("conversations.search", {text: query}).catch((error: unknown) => {
        onError(error);
        return [];
    }), [client, onError]);

    return {conversations, loaded, refresh, create, rename, setPolicy, remove, pin, trash, restore, search};
}

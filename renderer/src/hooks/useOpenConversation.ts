import {useCallback, useEffect, useState} from "react";
import type {ApiOutput, TurnResult} from "../../../src/core/common/api/index.js";
import type {Message} from "../../../src/core/common/types.js";
import type {RouteRequest} from "../../../src/core/common/types.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

type OpenConversation = ApiOutput<"conversations.get">;

/**
 * The open conversation: its messages, the reply streaming into it, and the chat actions.
 * Streamed text is appended as it arrives; the stored version replaces it when the turn ends.
 */
export function useOpenConversation(client: AppCoreClient, conversationId: string | null, onError: (error: unknown) => void) {
    const [open, setOpen] = useState<OpenConversation | null>(null);
    const [generating, setGenerating] = useState(false);

    const refresh = useCallback(async () => {
        if (conversationId == null) {
            setOpen(null);
            setGenerating(false);
            return;
        }
        try {
            const loaded = await client.call("conversations.get", {conversationId});
            setOpen(loaded);
            setGenerating(loaded.generating);
        } catch (error) {
            onError(error);
        }
    }, [client, conversationId, onError]);

    useEffect(() => {
        setOpen(null);
        void refresh();
        return client.onConnectionChange((state) => {
            if (state === "connected")
                void refresh();
        });
    }, [client, refresh]);

    useCoreEvent(client, "turn.started", (started) => {
        if (started.conversationId !== conversationId)
            return;
        setGenerating(true);
        void refresh();
    });
    useCoreEvent(client, "message.text", (chunk) => {
        if (chunk.conversationId !== conversationId)
            return;
        setOpen((current) => current == null ? current : {
            ...current,
            messages: appendText(current.messages, chunk.messageId, chunk.text)
        });
    });
    useCoreEvent(client, "turn.finished", (result) => {
        if (result.conversationId !== conversationId)
            return;
        setGenerating(false);
        // A blocked reply's streamed text goes at once, before the stored (empty) version arrives.
        if (result.status === "blocked")
            setOpen((current) => current == null ? current : {...current, messages: markBlocked(current.messages, result)});
        void refresh();
    });
    useCoreEvent(client, "turn.error", (failure) => {
        if (failure.conversationId !== conversationId)
            return;
        setGenerating(false);
        onError(failure.error);
        void refresh();
    });

    const send = useCallback(async (text: string, route: RouteRequest = "auto") => {
        if (conversationId == null)
            return false;
        try {
            setGenerating(true);
            await client.call("chat.send", {conversationId, text, route});
            return true;
        } catch (error) {
            setGenerating(false);
            onError(error);
            return false;
        }
    }, [client, conversationId, onError]);

    const stop = useCallback(async () => {
        if (conversationId != null)
            await client.call("chat.stop", {conversationId}).catch(onError);
    }, [client, conversationId, onError]);

    const regenerate = useCallback(async (route: RouteRequest = "auto") => {
        if (conversationId == null)
            return;
        try {
            setGenerating(true);
            await client.call("chat.regenerate", {conversationId, route});
        } catch (error) {
            setGenerating(false);
            onError(error);
            // A regenerate refused before it started puts the prompt back, as new messages.
            void refresh();
        }
    }, [client, conversationId, onError, refresh]);

    return {conversation: open?.conversation ?? null, messages: open?.messages ?? [], generating, send, stop, regenerate, refresh};
}

function appendText(messages: Message[], messageId: number, text: string): Message[] {
    const index = messages.findIndex((message) => message.id === messageId);
    if (index < 0)
        return messages;
    const next = [...messages];
    next[index] = {...messages[index]!, content: messages[index]!.content + text, status: "streaming"};
    return next;
}

function markBlocked(messages: Message[], result: TurnResult): Message[] {
    return messages.map((message) => message.id !== result.assistantMessageId ? message : {
        ...message, content: "", status: "blocked", verdict: (result.route === "cloud" ? result.cloud.verdict : null) ?? message.verdict ?? null
    });
}

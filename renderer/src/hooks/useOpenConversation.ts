import {useQuery, useQueryClient} from "@tanstack/react-query";
import {useCallback} from "react";
import type {RouteRequest} from "../../../src/core/common/types.js";
import type {CloudSecretsOptions} from "../../../src/core/common/secretScan/types.js";
import {updateConversation} from "../queries/coreEventCache.js";
import {conversationQuery} from "../queries/coreQueries.js";
import {queryKeys} from "../queries/queryKeys.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useConnected} from "./useConnected.js";
import {useCoreEvent} from "./useCoreEvent.js";
import {useReportError} from "./useReportError.js";
import {secretFindingsOf, type ReviewSecrets} from "./useSecretReview.js";
import {cloudDocumentsOf, type ReviewCloudDocuments} from "./useCloudDocumentsReview.js";
import type {UploadedAttachment} from "../uploadAttachment.js";

/** Where a turn goes and, for a cloud turn, what it does with the secrets the scan finds. */
type TurnRouting = {route: RouteRequest, secrets?: CloudSecretsOptions, sendAttachments?: boolean};

/**
 * The open conversation: its messages, the reply streaming into it, and the chat actions.
 * Its copy is the `conversation` query of its own id: streamed text is written into it as it
 * arrives, the stored version replaces it when the turn ends (`applyCoreEvent`), and an answer
 * for another conversation lands under that one's key, never in the one shown.
 * A cloud turn the core holds back for the secrets it would send goes to `reviewSecrets`, and
 * runs again as the user chooses: redacted, locally, or not at all. A cloud turn that would send
 * documents goes to `reviewCloudDocuments` first, and runs again only if the user agrees.
 */
export function useOpenConversation(client: AppCoreClient, conversationId: string | null, onError: (error: unknown) => void, reviewSecrets: ReviewSecrets,
    reviewCloudDocuments: ReviewCloudDocuments) {
    const queryClient = useQueryClient();
    const connected = useConnected(client);
    const open = useQuery(conversationQuery(client, conversationId, connected));
    useReportError(open.error, onError);
    const data = conversationId != null ? open.data ?? null : null;
    const generating = data?.generating ?? false;

    const refresh = useCallback(async () => {
        if (conversationId != null)
            await queryClient.invalidateQueries({queryKey: queryKeys.conversation(conversationId)});
    }, [queryClient, conversationId]);

    const setGenerating = useCallback((value: boolean) => {
        if (conversationId != null)
            updateConversation(queryClient, conversationId, (current) => ({...current, generating: value}));
    }, [queryClient, conversationId]);

    useCoreEvent(client, "turn.error", (failure) => {
        if (failure.conversationId === conversationId)
            onError(failure.error);
    });

    /**
     * Starts a turn with `call`; resolves true once it has started, false when the user cancelled it
     * after a secret was found. Other refusals are thrown, as `call` threw them.
     */
    const startTurn = useCallback(async (call: (routing: TurnRouting) => Promise<unknown>, route: RouteRequest) => {
        setGenerating(true);
        try {
            await call({route});
            return true;
        } catch (error) {
            setGenerating(false);
            const documents = cloudDocumentsOf(error);
            let routing: TurnRouting = {route};
            let refusal = error;
            if (documents != null) {
                if (!await reviewCloudDocuments(documents))
                    return false;
                routing = {route, sendAttachments: true};
                setGenerating(true);
                try {
                    await call(routing);
                    return true;
                } catch (secondError) {
                    setGenerating(false);
                    refusal = secondError;
                }
            }
            const findings = secretFindingsOf(refusal);
            if (findings == null)
                throw refusal;
            const choice = await reviewSecrets(findings);
            if (choice === "cancel")
                return false;
            setGenerating(true);
            await call(choice === "redact" ? {...routing, secrets: {redact: true}} : {route: "local"});
            return true;
        }
    }, [reviewSecrets, reviewCloudDocuments, setGenerating]);

    const send = useCallback(async (text: string, route: RouteRequest = "auto", attachments: UploadedAttachment[] = []) => {
        if (conversationId == null)
            return false;
        const uploads = attachments.map(({uploadId}) => ({uploadId}));
        try {
            return await startTurn((routing) => client.call("chat.send", {conversationId, text, ...routing, ...uploads.length > 0 ? {uploads} : {}}), route);
        } catch (error) {
            setGenerating(false);
            onError(error);
            return false;
        }
    }, [client, conversationId, onError, setGenerating, startTurn]);

    const stop = useCallback(async () => {
        if (conversationId != null)
            await client.call("chat.stop", {conversationId}).catch(onError);
    }, [client, conversationId, onError]);

    /** Edit and resend: the prompt and what followed are kept as an older version; `text` goes in their place. */
    const editAndResend = useCallback(async (messageId: number, text: string, route: RouteRequest = "auto") => {
        if (conversationId == null)
            return false;
        try {
            const started = await startTurn((routing) => client.call("chat.editAndResend", {conversationId, messageId, text, ...routing}), route);
            if (!started)
                void refresh(); // the branch as it was is back
            return started;
        } catch (error) {
            setGenerating(false);
            onError(error);
            void refresh();
            return false;
        }
    }, [client, conversationId, onError, refresh, setGenerating, startTurn]);

    /** Shows another version of a message an edit kept. */
    const showVersion = useCallback(async (messageId: number) => {
        if (conversationId == null)
            return;
        try {
            const {messages} = await client.call("chat.showVersion", {conversationId, messageId});
            updateConversation(queryClient, conversationId, (current) => ({...current, messages}));
        } catch (error) {
            onError(error);
        }
    }, [client, queryClient, conversationId, onError]);

    /** Keeps the composer's unsent text in the core, so that it survives a reload, a restart, a refused turn. */
    const saveDraft = useCallback(async (id: string, text: string) => {
        await client.call("conversations.saveDraft", {conversationId: id, text}).catch(() => undefined);
    }, [client]);

    const regenerate = useCallback(async (route: RouteRequest = "auto") => {
        if (conversationId == null)
            return;
        try {
            // A regenerate refused before it started puts the prompt back, as new messages.
            if (!await startTurn((routing) => client.call("chat.regenerate", {conversationId, ...routing}), route))
                void refresh();
        } catch (error) {
            setGenerating(false);
            onError(error);
            void refresh();
        }
    }, [client, conversationId, onError, refresh, setGenerating, startTurn]);

    return {
        conversation: data?.conversation ?? null, messages: data?.messages ?? noMessages, draft: data?.draft ?? null, generating,
        send, stop, regenerate, editAndResend, showVersion, saveDraft, refresh
    };
}


const noMessages: never[] = [];

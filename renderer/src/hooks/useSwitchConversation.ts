import {useCallback, type Dispatch} from "react";
import type {ScrubReport} from "../../../src/core/common/types.js";
import {isCleanroomError} from "../../../src/core/common/errors.js";
import type {NavigationAction} from "../navigation.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import type {ConversationListItem} from "./useConversationList.js";

type SwitchSources = {openId: string | null, generating: boolean, conversations: ConversationListItem[]};

/**
 * Opens another conversation and ends the session of the one left (unless a reply is still
 * streaming in it): the Isolation panel then shows that session's scrub, or the failed one.
 */
export function useSwitchConversation(client: AppCoreClient, dispatch: Dispatch<NavigationAction>, {openId, generating, conversations}: SwitchSources,
    showError: (error: unknown) => void) {
    return useCallback(async (id: string | null) => {
        const previousId = openId;
        if (previousId === id)
            return;
        dispatch({type: "opened", id});
        const left = conversations.find((conversation) => conversation.id === previousId);
        if (previousId == null || generating || left == null)
            return;
        const showScrub = (scrub: ScrubReport, at: number) =>
            dispatch({type: "previousSessionEnded", openId: id, previous: {title: left.title, scrub, at}});
        const showLastScrub = async () => {
            const {lastScrub} = await client.call("isolation.report", {conversationId: previousId});
            if (lastScrub != null)
                showScrub(lastScrub, lastScrub.at);
        };
        try {
            const {scrub} = await client.call("conversations.close", {conversationId: previousId});
            if (scrub != null)
                showScrub(scrub, Date.now());
            else
                await showLastScrub(); // its session had already ended (a stopped turn is scrubbed at once): show that scrub
        } catch (error) {
            showError(error);
            // A scrub that could not be verified: the card shows that (failed) scrub too.
            if (isCleanroomError(error, "SCRUB_UNVERIFIED"))
                await showLastScrub().catch(showError);
        }
    }, [client, dispatch, openId, generating, conversations, showError]);
}

import {useEffect, useRef, type Dispatch} from "react";
import {conversationToOpen, type NavigationAction, type NavigationState} from "../navigation.js";
import type {ConversationListItem} from "./useConversationList.js";

type OpeningSources = {
    conversations: ConversationListItem[],
    listLoaded: boolean,
    modelKnown: boolean,
    modelReady: boolean,
    openMostRecentOrCreate: () => Promise<{id: string}>
};

/** Fills the place when no conversation is open, as `conversationToOpen` decides: the one used last, or the core's latest-or-new. */
export function useOpeningRules(navigation: NavigationState, dispatch: Dispatch<NavigationAction>, sources: OpeningSources, onError: (error: unknown) => void) {
    const creating = useRef(false);
    const {conversations, listLoaded, modelKnown, modelReady, openMostRecentOrCreate} = sources;
    const {openId, whenNothingOpen} = navigation;
    useEffect(() => {
        const next = conversationToOpen({openId, whenNothingOpen}, {conversations, listLoaded, modelKnown, modelReady});
        if (next === "latestOrNew") {
            if (creating.current)
                return;
            creating.current = true;
            void openMostRecentOrCreate().then((conversation) => dispatch({type: "filled", id: conversation.id}), onError)
                .finally(() => creating.current = false);
        } else if (next != null)
            dispatch({type: "opened", id: next.id});
    }, [openId, whenNothingOpen, conversations, listLoaded, modelKnown, modelReady, openMostRecentOrCreate, dispatch, onError]);
}

import {useCallback, useRef, type Dispatch} from "react";
import {mostRecentlyActive} from "../../../src/core/common/conversationOrder.js";
import type {NavigationAction, PendingDeletion} from "../navigation.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import type {Banner} from "./useBanners.js";
import {useCoreEvent} from "./useCoreEvent.js";
import type {useConversationList} from "./useConversationList.js";

/** How long a deletion can be undone before the conversation is deleted (scrubbed at once, deleted then). */
export const undoDeleteMs = 6000;
const purgeBannerId = "deletion-purge";
const deletionPendingNotice = {
    kind: "warning" as const,
    title: "Deleted, but its text is not yet purged from disk",
    detail: "Another program is reading the database (a backup, a sync tool, the command line), so the deleted text stays in the " +
        "database file until it is done. Cleanroom finishes the purge as soon as it lets go."
};
const deletionPurgedNotice = {
    kind: "info" as const,
    title: "Purge finished",
    detail: "The deleted conversation's text is now gone from the database file and its journal."
};

type DeletionSources = {
    client: AppCoreClient,
    list: ReturnType<typeof useConversationList>,
    pendingDeletion: PendingDeletion | null,
    dispatch: Dispatch<NavigationAction>,
    show: (banner: Banner) => void,
    showError: (error: unknown) => void
};

/**
 * Delete with Undo: the session is scrubbed and the conversation leaves the list at once (the most
 * recent other one opens if it was open); it is deleted when Undo runs out, or when another deletion
 * comes. A purge the database cannot finish yet (another reader) is announced, and so is its end.
 */
export function useUndoableDelete({client, list, pendingDeletion, dispatch, show, showError}: DeletionSources) {
    const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
    const purgePending = useRef(false);

    const stopTimer = useCallback((id: string) => {
        clearTimeout(timers.current.get(id));
        timers.current.delete(id);
    }, []);

    /** The deletion itself, once its Undo ran out (or another deletion came): the conversation, its messages and trail. */
    const finishDeletion = useCallback(async (id: string) => {
        stopTimer(id);
        dispatch({type: "deletionSettled", id});
        try {
            const {purge} = await list.remove(id);
            if (purge === "pending") {
                purgePending.current = true;
                show({id: purgeBannerId, ...deletionPendingNotice});
            }
        } catch (error) {
            showError(error);
        }
    }, [list, dispatch, show, showError, stopTimer]);

    const deleteConversation = useCallback(async (id: string) => {
        const title = list.conversations.find((conversation) => conversation.id === id)?.title ?? "Conversation";
        if (pendingDeletion != null)
            void finishDeletion(pendingDeletion.id);
        try {
            await list.trash(id);
        } catch (error) {
            showError(error);
            return;
        }
        const nextOpenId = mostRecentlyActive(list.conversations.filter((conversation) => conversation.id !== id))?.id ?? null;
        dispatch({type: "deletionStarted", deletion: {id, title}, nextOpenId});
        timers.current.set(id, setTimeout(() => void finishDeletion(id), undoDeleteMs));
    }, [list, pendingDeletion, dispatch, finishDeletion, showError]);

    const undoDeletion = useCallback(async () => {
        if (pendingDeletion == null)
            return;
        const {id} = pendingDeletion;
        stopTimer(id);
        dispatch({type: "deletionSettled", id});
        try {
            await list.restore(id);
            dispatch({type: "restored", id});
        } catch (error) {
            showError(error);
        }
    }, [list, pendingDeletion, dispatch, showError, stopTimer]);

    /** Drops the pending deletion without deleting (Delete everything deletes it anyway). */
    const forgetPendingDeletion = useCallback(() => {
        for (const id of timers.current.keys())
            stopTimer(id);
    }, [stopTimer]);

    useCoreEvent(client, "audit.event", (event) => {
        // The core finishes a pending purge once the other reader is done, and records it.
        if (event.kind !== "deletion.purged" || !purgePending.current)
            return;
        purgePending.current = false;
        show({id: purgeBannerId, ...deletionPurgedNotice});
    });

    return {deleteConversation, undoDeletion, forgetPendingDeletion};
}

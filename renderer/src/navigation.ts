import {mostRecentlyActive, type ListOrderKey} from "../../src/core/common/conversationOrder.js";
import type {PreviousSession} from "./components/IsolationPanel.js";

/** Below a width the sidebar and the Isolation panel are drawers behind toggles; one at a time is open. */
export type Drawer = "sidebar" | "isolation";
/** What covers the app: the Settings dialog, the Models view, the shortcuts sheet. */
export type Panel = "settings" | "models" | "help";
/** A deletion the user can still undo (the conversation is out of the list, and deleted when Undo runs out). */
export type PendingDeletion = {id: string, title: string};

/** Where the user is in the app: the one place that says which conversation is open. The core's data is in the query cache, not here. */
export type NavigationState = {
    openId: string | null,
    /**
     * What fills the place when no conversation is open: `first`, the app's first opening (it waits for the list and the model's
     * status); `fill`, the most recent conversation (or a new one); `none`, nothing until the user opens one (after Delete everything).
     */
    whenNothingOpen: "first" | "fill" | "none",
    /** The scrub of the session ended by the last switch, shown in the Isolation panel. */
    previous: PreviousSession | null,
    pendingDeletion: PendingDeletion | null,
    drawer: Drawer | null,
    panel: Panel | null
};

export type NavigationAction =
    /** The user (or an opening rule, at once) opened a conversation, or none. */
    | {type: "opened", id: string | null}
    /**
     * The core's answer to an opening rule (its latest conversation, or a new one), which arrives later: applied only while
     * nothing is open, so that a conversation the user opened or made meanwhile stays open.
     */
    | {type: "filled", id: string}
    /** The session of the conversation left to open `openId` ended with this scrub. */
    | {type: "previousSessionEnded", openId: string | null, previous: PreviousSession}
    /** A deletion started: the conversation leaves the list; if it was open, `nextOpenId` is open instead. */
    | {type: "deletionStarted", deletion: PendingDeletion, nextOpenId: string | null}
    /** The deletion of `id` can no longer be undone (Undo ran out, another deletion came, or it was undone). */
    | {type: "deletionSettled", id: string}
    /** A conversation back from an undone deletion is open again (its session was already ended). */
    | {type: "restored", id: string}
    /** Delete everything: nothing open, and nothing is opened for the user (no new conversation is made). */
    | {type: "everythingDeleted"}
    | {type: "drawerToggled", drawer: Drawer}
    | {type: "drawerOpened", drawer: Drawer}
    | {type: "drawerClosed"}
    | {type: "panelOpened", panel: Panel}
    | {type: "panelClosed"};

export const initialNavigation: NavigationState = {openId: null, whenNothingOpen: "first", previous: null, pendingDeletion: null, drawer: null, panel: null};

export function navigationReducer(state: NavigationState, action: NavigationAction): NavigationState {
    switch (action.type) {
        case "opened":
            return state.openId === action.id && state.whenNothingOpen === "fill" ? state : {...state, openId: action.id, whenNothingOpen: "fill", previous: null};
        case "filled":
            return state.openId == null && state.whenNothingOpen !== "none" ? navigationReducer(state, {type: "opened", id: action.id}) : state;
        case "previousSessionEnded":
            // Answered after the user moved on again: that scrub is no longer the one "before" what is open.
            return state.openId === action.openId ? {...state, previous: action.previous} : state;
        case "deletionStarted":
            return state.openId === action.deletion.id
                ? {...state, pendingDeletion: action.deletion, openId: action.nextOpenId, previous: null}
                : {...state, pendingDeletion: action.deletion};
        case "deletionSettled":
            return state.pendingDeletion?.id === action.id ? {...state, pendingDeletion: null} : state;
        case "restored":
            return {...state, openId: action.id, whenNothingOpen: "fill", previous: null};
        case "everythingDeleted":
            return {...state, openId: null, whenNothingOpen: "none", previous: null, pendingDeletion: null};
        case "drawerToggled":
            return {...state, drawer: state.drawer === action.drawer ? null : action.drawer};
        case "drawerOpened":
            return {...state, drawer: action.drawer};
        case "drawerClosed":
            return state.drawer == null ? state : {...state, drawer: null};
        case "panelOpened":
            return {...state, panel: action.panel};
        case "panelClosed":
            return {...state, panel: null};
    }
}

export type OpeningFacts = {conversations: readonly ListOrderKey[], listLoaded: boolean, modelKnown: boolean, modelReady: boolean};

/**
 * What to open when nothing is: the conversation used last; none yet (and the model ready to chat),
 * the core's most recent or a new one (`latestOrNew`); else nothing for now. The first opening waits
 * for the list and the model's status, so the app opens where people expect; after Delete everything,
 * nothing is opened for the user.
 */
export function conversationToOpen(state: Pick<NavigationState, "openId" | "whenNothingOpen">, facts: OpeningFacts): {id: string} | "latestOrNew" | null {
    if (state.openId != null || state.whenNothingOpen === "none" || (state.whenNothingOpen === "first" && (!facts.listLoaded || !facts.modelKnown)))
        return null;
    const latest = mostRecentlyActive(facts.conversations);
    if (latest != null)
        return {id: latest.id};
    return facts.listLoaded && facts.modelReady ? "latestOrNew" : null;
}

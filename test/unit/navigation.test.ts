import {describe, expect, it} from "vitest";
import type {PreviousSession} from "../../renderer/src/components/IsolationPanel.js";
import {conversationToOpen, initialNavigation, navigationReducer, type NavigationAction, type NavigationState} from "../../renderer/src/navigation.js";

const scrub = {verified: true} as PreviousSession["scrub"];
const previous: PreviousSession = {title: "Left behind", scrub, at: 1};
const run = (...actions: NavigationAction[]) => actions.reduce(navigationReducer, initialNavigation);
const conversation = (id: string, updatedAt: number, pinned = false) => ({id, updatedAt, pinned});

describe("navigation: which conversation is open, the pending deletion, drawers and panels", () => {
    it("opening a conversation forgets the scrub card of the one before; the card of the switch arrives after", () => {
        const state = run({type: "opened", id: "a"}, {type: "opened", id: "b"}, {type: "previousSessionEnded", openId: "b", previous});
        expect(state).toMatchObject({openId: "b", previous, whenNothingOpen: "fill"});
        expect(navigationReducer(state, {type: "opened", id: "c"}).previous).toBeNull();
    });

    it("a scrub card answered after the user moved on again is not shown under the wrong conversation", () => {
        const state = run({type: "opened", id: "a"}, {type: "opened", id: "b"}, {type: "opened", id: "c"}, {type: "previousSessionEnded", openId: "b", previous});
        expect(state).toMatchObject({openId: "c", previous: null});
    });

    it("the core's late answer to an opening rule opens its conversation only while nothing is open: one the user made meanwhile stays open", () => {
        expect(run({type: "filled", id: "latest"})).toMatchObject({openId: "latest", whenNothingOpen: "fill"});
        // The user clicked New conversation while the app was still asking the core for its latest or a new one.
        expect(run({type: "opened", id: "mine"}, {type: "filled", id: "latest"})).toMatchObject({openId: "mine"});
        // After Delete everything the app opens nothing for the user, however late an answer comes.
        expect(run({type: "everythingDeleted"}, {type: "filled", id: "latest"})).toMatchObject({openId: null, whenNothingOpen: "none"});
    });

    it("deleting the open conversation opens the next one and holds the deletion for Undo; Undo opens it again", () => {
        const deleting = run({type: "opened", id: "a"}, {type: "previousSessionEnded", openId: "a", previous},
            {type: "deletionStarted", deletion: {id: "a", title: "Alpha"}, nextOpenId: "b"});
        expect(deleting).toMatchObject({openId: "b", previous: null, pendingDeletion: {id: "a", title: "Alpha"}});

        const undone = run({type: "opened", id: "a"}, {type: "deletionStarted", deletion: {id: "a", title: "Alpha"}, nextOpenId: "b"},
            {type: "deletionSettled", id: "a"}, {type: "restored", id: "a"});
        expect(undone).toMatchObject({openId: "a", pendingDeletion: null});
    });

    it("deleting another conversation leaves the open one open; an old deletion settling does not drop a newer pending one", () => {
        const state = run({type: "opened", id: "a"}, {type: "deletionStarted", deletion: {id: "b", title: "Beta"}, nextOpenId: "a"},
            {type: "deletionStarted", deletion: {id: "c", title: "Gamma"}, nextOpenId: "a"}, {type: "deletionSettled", id: "b"});
        expect(state).toMatchObject({openId: "a", pendingDeletion: {id: "c", title: "Gamma"}});
    });

    it("Delete everything leaves nothing open and nothing pending, and nothing is opened for the user until they open one", () => {
        const state = run({type: "opened", id: "a"}, {type: "deletionStarted", deletion: {id: "b", title: "Beta"}, nextOpenId: "a"}, {type: "everythingDeleted"});
        expect(state).toMatchObject({openId: null, pendingDeletion: null, whenNothingOpen: "none"});
        expect(conversationToOpen(state, {conversations: [], listLoaded: true, modelKnown: true, modelReady: true})).toBeNull();
        expect(conversationToOpen(navigationReducer(state, {type: "opened", id: null}), {conversations: [], listLoaded: true, modelKnown: true, modelReady: true}))
            .toBe("latestOrNew");
    });

    it("one drawer at a time: a toggle opens it, closes it, or swaps to the other; panels open and close", () => {
        expect(run({type: "drawerToggled", drawer: "sidebar"}).drawer).toBe("sidebar");
        expect(run({type: "drawerToggled", drawer: "sidebar"}, {type: "drawerToggled", drawer: "sidebar"}).drawer).toBeNull();
        expect(run({type: "drawerToggled", drawer: "sidebar"}, {type: "drawerToggled", drawer: "isolation"}).drawer).toBe("isolation");
        expect(run({type: "drawerOpened", drawer: "sidebar"}, {type: "drawerClosed"}).drawer).toBeNull();
        expect(run({type: "panelOpened", panel: "settings"}, {type: "panelOpened", panel: "models"}).panel).toBe("models");
        expect(run({type: "panelOpened", panel: "help"}, {type: "panelClosed"}).panel).toBeNull();
    });

    it("closing a drawer that is not open changes nothing (no re-render)", () => {
        const state: NavigationState = run({type: "opened", id: "a"});
        expect(navigationReducer(state, {type: "drawerClosed"})).toBe(state);
    });
});

describe("conversationToOpen: what fills the place when nothing is open", () => {
    const facts = {listLoaded: true, modelKnown: true, modelReady: true};

    it("at start, waits for the list and the model's status, then opens the conversation used last (pinned or not)", () => {
        const conversations = [conversation("pinned-old", 1, true), conversation("recent", 5), conversation("older", 3)];
        expect(conversationToOpen(initialNavigation, {...facts, conversations, listLoaded: false})).toBeNull();
        expect(conversationToOpen(initialNavigation, {...facts, conversations, modelKnown: false})).toBeNull();
        expect(conversationToOpen(initialNavigation, {...facts, conversations})).toEqual({id: "recent"});
    });

    it("with no conversation yet, asks the core for its latest or a new one, once the model is ready to chat", () => {
        expect(conversationToOpen(initialNavigation, {...facts, conversations: [], modelReady: false})).toBeNull();
        expect(conversationToOpen(initialNavigation, {...facts, conversations: []})).toBe("latestOrNew");
    });

    it("opens nothing while a conversation is open", () => {
        expect(conversationToOpen(run({type: "opened", id: "a"}), {...facts, conversations: [conversation("b", 9)]})).toBeNull();
    });

    it("after the open one was deleted with none left: the most recent, or a new one", () => {
        const emptied = run({type: "opened", id: "a"}, {type: "deletionStarted", deletion: {id: "a", title: "Alpha"}, nextOpenId: null});
        expect(conversationToOpen(emptied, {...facts, conversations: [conversation("b", 2)]})).toEqual({id: "b"});
        expect(conversationToOpen(emptied, {...facts, conversations: []})).toBe("latestOrNew");
    });
});

import {describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {ConversationRouter} from "../../src/core/node/ConversationRouter.js";

/** A service set as the router sees it: a name to tell the two apart, and an in-memory audit log whose events are kept. */
function fakeSet(name: "stored" | "incognito") {
    const audit = new AuditLog(null);
    const recorded: AuditEvent[] = [];
    audit.onEvent.createListener((event) => recorded.push(event));
    return {name, audit, recorded};
}

function router() {
    const stored = fakeSet("stored");
    const incognito = fakeSet("incognito");
    return {stored, incognito, router: new ConversationRouter({stored, incognito})};
}

describe("which service set holds a conversation", () => {
    it("an incognito conversation, once registered, is served by the incognito set and its trail goes to the in-memory log", () => {
        const {router: routes, incognito, stored} = router();
        routes.registerIncognito("secret-chat");

        expect(routes.isIncognito("secret-chat")).toBe(true);
        expect(routes.servicesOf("secret-chat").name).toBe("incognito");
        routes.auditOf("secret-chat").record({kind: "context.created", conversationId: "secret-chat", data: {contextId: "ctx-1", kvCells: 256, kvBytes: 1024, threads: 1}});
        expect(incognito.recorded.map((event) => [event.kind, event.conversationId])).toEqual([["context.created", "secret-chat"]]);
        expect(stored.recorded).toEqual([]);
    });

    it("a conversation never registered (a stored one, or an id nobody has) is served by the stored set, whose store answers whether it exists", () => {
        const {router: routes, incognito, stored} = router();
        routes.registerIncognito("secret-chat");

        for (const id of ["stored-chat", "no-such-conversation"]) {
            expect(routes.isIncognito(id)).toBe(false);
            expect(routes.servicesOf(id).name).toBe("stored");
            expect(routes.auditOf(id)).toBe(stored.audit);
        }
        routes.auditOf("stored-chat").record({kind: "conversation.trashed", conversationId: "stored-chat", data: {}});
        expect(stored.recorded.map((event) => event.conversationId)).toEqual(["stored-chat"]);
        expect(incognito.recorded).toEqual([]);
    });

    it("events of no conversation (a model load) go to the stored set's log", () => {
        const {router: routes, stored} = router();
        expect(routes.auditOf(null)).toBe(stored.audit);
    });

    it("new conversations go to the set asked for", () => {
        const {router: routes} = router();
        expect(routes.setFor({incognito: true}).name).toBe("incognito");
        expect(routes.setFor({incognito: false}).name).toBe("stored");
    });

    it("a deleted incognito conversation is unregistered: its id falls back to the stored set, where it is not found; the others stay", () => {
        const {router: routes} = router();
        routes.registerIncognito("first");
        routes.registerIncognito("second");

        routes.unregister("first");
        expect(routes.servicesOf("first").name).toBe("stored");
        expect(routes.servicesOf("second").name).toBe("incognito");
        // Unregistering an id that is not registered (a stored conversation deleted) changes nothing.
        routes.unregister("stored-chat");
        expect(routes.servicesOf("second").name).toBe("incognito");
    });

    it("\"Delete everything\" unregisters every incognito conversation at once", () => {
        const {router: routes} = router();
        routes.registerIncognito("first");
        routes.registerIncognito("second");

        routes.unregisterAllIncognito();
        expect(["first", "second"].map((id) => routes.servicesOf(id).name)).toEqual(["stored", "stored"]);
    });

    it("lists both sets, incognito first, so that listeners hear every conversation's events", () => {
        const {router: routes} = router();
        expect(routes.sets().map((set) => set.name)).toEqual(["incognito", "stored"]);
    });
});

describe("a lone audit log", () => {
    it("holds every trail itself, so an engine outside the core records into it whatever the conversation", () => {
        const audit = new AuditLog(null);
        expect(audit.auditOf()).toBe(audit);
    });
});

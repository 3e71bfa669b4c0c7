import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";

/** Drafts, pins, content search, undoable deletion, export and import, edit-and-resend versions: the core's side of #12, on real SQLite. */
describe("the conversation library behind the app's list and composer", () => {
    let cores: Core[] = [];
    const open = (database = path.join(tempDir("library"), "library.db")) => {
        const core = openTestCore(() => Promise.reject(new Error("no model in this test")), {database});
        cores.push(core);
        return {core, database};
    };
    afterEach(async () => {
        await Promise.all(cores.map((core) => core.dispose()));
        cores = [];
    });

    /** A stored exchange, as a finished turn leaves it. */
    const exchange = (core: Core, conversationId: string, prompt: string, reply: string) => {
        const {store} = servicesOf(core);
        const {user, reply: answer} = store.appendTurn(conversationId, prompt, {route: "local", routeReason: "test"});
        store.finishMessage(answer.id, {content: reply, status: "complete", tokens: 7, tokensPerSecond: 42.5});
        return {user, reply: answer};
    };

    it("keeps a draft per conversation across a restart of the core, and forgets it when emptied", async () => {
        const {core, database} = open();
        const a = core.createConversation({title: "A"});
        const b = core.createConversation({title: "B"});
        core.saveDraft(a.id, "half a thought");
        core.saveDraft(b.id, "another");
        await core.dispose();
        const {core: again} = open(database);
        expect(again.draftOf(a.id)).toBe("half a thought");
        expect(again.draftOf(b.id)).toBe("another");
        again.saveDraft(a.id, "");
        expect(again.draftOf(a.id)).toBe("");
    });

    it("lists pinned conversations first, and finds conversations by the words of their messages (full-text, the last word also as a prefix)", () => {
        const {core} = open();
        const old = core.createConversation({title: "Groceries"});
        exchange(core, old.id, "We need 100% rye flour", "Noted: rye_flour");
        const recent = core.createConversation({title: "Holiday"});
        exchange(core, recent.id, "Book the lighthouse tour", "Booked.");
        expect(core.listConversations().map((conversation) => conversation.title)).toEqual(["Holiday", "Groceries"]);
        core.pinConversation(old.id, true);
        expect(core.listConversations().map((conversation) => [conversation.title, conversation.pinned])).toEqual([["Groceries", true], ["Holiday", false]]);

        const titles = (text: string) => core.searchConversations(text).map((hit) => hit.conversation.title);
        expect(core.searchConversations("LIGHTHOUSE").map((hit) => [hit.conversation.id, hit.matchedIn, hit.snippet]))
            .toEqual([[recent.id, "message", "Book the [lighthouse] tour"]]);
        expect(titles("100%")).toEqual(["Groceries"]);
        expect(titles("rye flour")).toEqual(["Groceries"]);
        expect(titles("lighthouse rye")).toEqual([]);
        expect(core.searchConversations("holi").map((hit) => [hit.conversation.title, hit.matchedIn, hit.snippet])).toEqual([["Holiday", "title", null]]);
    });

    it("a trashed conversation leaves the list and search with its id kept; restore brings it back whole; the next start deletes what is left", async () => {
        const {core, database} = open();
        const kept = core.createConversation({title: "Keep me"});
        exchange(core, kept.id, "remember the blue door", "The blue door.");
        await core.trashConversation(kept.id);
        expect(core.listConversations()).toEqual([]);
        expect(core.searchConversations("blue door")).toEqual([]);
        core.restoreConversation(kept.id);
        expect(core.listConversations().map((conversation) => conversation.id)).toEqual([kept.id]);
        expect(core.getConversation(kept.id).messages.map((message) => message.content)).toEqual(["remember the blue door", "The blue door."]);

        await core.trashConversation(kept.id);
        await core.dispose();
        const {core: again} = open(database);
        expect(await again.deleteTrashed()).toBe(1);
        expect(again.findConversation(kept.id)).toBeUndefined();
    });

    it("exports one or all conversations as Markdown and JSON, and imports the JSON back as new conversations", async () => {
        const {core} = open();
        const first = core.createConversation({title: "Recipes"});
        exchange(core, first.id, "How do I make bread?", "| step | what |\n|---|---|\n| 1 | knead |");
        const second = core.createConversation({title: "Trip", policy: "cloud-allowed"});
        exchange(core, second.id, "Pack list?", "- socks\n- map");

        const markdown = core.exportConversations(first.id, "markdown");
        expect(markdown.fileName).toBe("recipes.md");
        expect(markdown.text).toContain("# Recipes");
        expect(markdown.text).toContain("## You\n\nHow do I make bread?");
        expect(markdown.text).toContain("| 1 | knead |");

        const all = core.exportConversations(undefined, "json");
        expect(all.fileName).toBe("cleanroom-conversations.json");
        const imported = await core.importConversations(all.text);
        expect(imported.map((conversation) => conversation.title).sort()).toEqual(["Recipes", "Trip"]);
        expect(imported.every((conversation) => conversation.id !== first.id && conversation.id !== second.id)).toBe(true);
        const trip = imported.find((conversation) => conversation.title === "Trip")!;
        expect(trip.policy).toBe("cloud-allowed");
        expect(core.getConversation(trip.id).messages.map((message) => [message.role, message.content])).toEqual([["user", "Pack list?"], ["assistant", "- socks\n- map"]]);
        expect(core.listConversations()).toHaveLength(4);
        await expect(core.importConversations("{\"format\": \"something else\"}")).rejects.toThrow(/import file/);
        await expect(core.importConversations("not json")).rejects.toThrow(/not JSON/);
    });

    it("edit and resend keeps the old exchange as a version; switching versions shows each branch whole", () => {
        const {core} = open();
        const {store} = servicesOf(core);
        const conversation = core.createConversation();
        exchange(core, conversation.id, "first question", "first answer");
        const {user: asked} = exchange(core, conversation.id, "second question", "second answer");

        const taken = core.branchBefore(conversation.id, asked.id);
        expect(taken).toHaveLength(2);
        exchange(core, conversation.id, "second question, better", "better answer");
        const shown = store.messages(conversation.id);
        expect(shown.map((message) => message.content)).toEqual(["first question", "first answer", "second question, better", "better answer"]);
        expect(shown[2]!.branch).toMatchObject({index: 1, count: 2, previousId: asked.id, nextId: null});
        expect(shown[0]!.branch).toBeNull();
        expect(shown[3]!.tokensPerSecond).toBe(42.5);

        const older = core.showVersion(conversation.id, asked.id);
        expect(older.map((message) => message.content)).toEqual(["first question", "first answer", "second question", "second answer"]);
        expect(older[2]!.branch).toMatchObject({index: 0, count: 2, nextId: shown[2]!.id});
        const newer = core.showVersion(conversation.id, shown[2]!.id);
        expect(newer.map((message) => message.content)).toEqual(shown.map((message) => message.content));

        // A new turn continues the branch shown; an edit refused before it started puts the old branch back.
        const again = core.branchBefore(conversation.id, shown[2]!.id);
        core.restoreBranch(conversation.id, again);
        expect(store.messages(conversation.id).map((message) => message.content)).toEqual(shown.map((message) => message.content));
        expect(() => core.branchBefore(conversation.id, shown[3]!.id)).toThrow(/Only a prompt/);
    });
});

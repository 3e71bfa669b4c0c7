import path from "node:path";
import {afterEach, describe, expect, it, vi} from "vitest";
import {mostRecentlyActive} from "../../src/core/common/conversationOrder.js";
import type {Core} from "../../src/core/node/Core.js";
import {ActivityClock} from "../../src/core/node/database/ActivityClock.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * #28: conversations created or answered in the same millisecond kept swapping places (the list
 * broke ties by a random UUID). The clock is frozen here, so every write happens in one millisecond.
 */
describe("the conversation list's order, with every write in the same millisecond", () => {
    let cores: Core[] = [];
    const open = (database = path.join(tempDir("order"), "order.db")) => {
        const core = openTestCore(() => Promise.reject(new Error("no model in this test")), {database});
        cores.push(core);
        return core;
    };
    afterEach(async () => {
        vi.useRealTimers();
        await Promise.all(cores.map((core) => core.dispose()));
        cores = [];
    });
    const freezeClock = () => {
        vi.useFakeTimers({toFake: ["Date"]});
        vi.setSystemTime(new Date("2026-12-04T12:00:00.000Z"));
    };
    /** A finished local turn in a stored conversation. */
    const answer = (core: Core, conversationId: string) => {
        const {store} = servicesOf(core);
        const {reply} = store.appendTurn(conversationId, "hello", {route: "local", routeReason: "test"});
        store.finishMessage(reply.id, {content: "hi", status: "complete"});
    };

    it("lists the conversation active last first, stored and incognito alike, the same way every time; the app opens that one", () => {
        const core = open();
        freezeClock();
        const titles = ["first", "second", "third", "fourth", "fifth", "sixth"];
        const created = titles.map((title, index) => core.createConversation({title, incognito: index % 2 === 1}));
        const expected = [...titles].reverse();
        for (let listing = 0; listing < 20; listing++)
            expect(core.listConversations().map((conversation) => conversation.title)).toEqual(expected);

        // Answering the oldest makes it the most recent; search agrees with the list.
        answer(core, created[0]!.id);
        answer(core, created[2]!.id);
        const afterAnswers = ["third", "first", "sixth", "fifth", "fourth", "second"];
        expect(core.listConversations().map((conversation) => conversation.title)).toEqual(afterAnswers);
        expect(core.searchConversations("hello").map((hit) => hit.conversation.title)).toEqual(["third", "first"]);
        expect(mostRecentlyActive(core.listConversations())?.title).toBe("third");

        // Pinned first; the app's "most recent" still means active last.
        core.pinConversation(created[1]!.id, true);
        expect(core.listConversations().map((conversation) => conversation.title)).toEqual(["second", ...afterAnswers.filter((title) => title !== "second")]);
        expect(mostRecentlyActive(core.listConversations())?.title).toBe("third");
    });

    it("two connections to one file with clocks of their own (as two processes have) still never tie", () => {
        const database = path.join(tempDir("order"), "two.db");
        open(database);
        freezeClock();
        const [one, two] = [openDatabase(database), openDatabase(database)];
        try {
            const stores = [new ConversationStore(one, {clock: new ActivityClock()}), new ConversationStore(two, {clock: new ActivityClock()})];
            const made = Array.from({length: 6}, (_, index) => stores[index % 2]!.create({title: `made ${index}`}));
            expect(new Set(made.map((conversation) => conversation.updatedAt)).size).toBe(6);
            expect(stores[0]!.list().map((conversation) => conversation.title)).toEqual(made.map((conversation) => conversation.title).reverse());
            expect(stores[1]!.list()).toEqual(stores[0]!.list());
        } finally {
            one.close();
            two.close();
        }
    });
});

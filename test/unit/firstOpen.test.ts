import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {connectCoreClient, createInProcessChannelPair, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import type {Core} from "../../src/core/node/Core.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {openTestCore} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * #28: the app opened on two "New conversation" entries. Opening the first conversation was a list
 * then a create, decided in the page: anything else that did the same in between (an overlapping
 * effect, a reload while the first create was in flight, a second window) made a second one.
 * `conversations.latestOrNew` decides in the core, in one step.
 */
describe("opening the first conversation, from several windows at once", () => {
    let closeAll: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
        for (const close of closeAll.reverse())
            await close();
        closeAll = [];
    });
    const openCoreWithWindows = (count: number) => {
        const core: Core = openTestCore(() => Promise.reject(new Error("no model in this test")), {database: path.join(tempDir("first-open"), "first.db")});
        const service: CoreService = createCoreService(core);
        closeAll.push(() => core.dispose(), () => service.dispose());
        const windows: ConnectedCoreClient[] = Array.from({length: count}, () => {
            const [coreSide, clientSide, close] = createInProcessChannelPair();
            serveCoreOverChannel(service, coreSide);
            closeAll.push(close);
            return connectCoreClient(clientSide);
        });
        return {core, windows};
    };

    it("conversations.latestOrNew from every window at once gives them all the same one new conversation", async () => {
        const {windows} = openCoreWithWindows(3);
        const opened = await Promise.all(windows.map((window) => window.call("conversations.latestOrNew", {})));
        expect(new Set(opened.map((conversation) => conversation.id)).size).toBe(1);
        const listed = await windows[0]!.call("conversations.list", {});
        expect(listed.map((conversation) => [conversation.id, conversation.title])).toEqual([[opened[0]!.id, "New conversation"]]);
    });

    it("opens the conversation active last, incognito or pinned alike, and leaves the trash alone", async () => {
        const {core, windows} = openCoreWithWindows(1);
        const older = core.createConversation({title: "older"});
        core.pinConversation(older.id, true);
        const newer = core.createConversation({title: "newer", incognito: true});
        expect((await windows[0]!.call("conversations.latestOrNew", {})).id).toBe(newer.id);
        await core.trashConversation(newer.id);
        expect((await windows[0]!.call("conversations.latestOrNew", {})).id).toBe(older.id);
        await core.trashConversation(older.id);
        const fresh = await windows[0]!.call("conversations.latestOrNew", {});
        expect([older.id, newer.id]).not.toContain(fresh.id);
        expect(core.listConversations().map((conversation) => conversation.id)).toEqual([fresh.id]);
    });
});

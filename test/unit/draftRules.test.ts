import {describe, expect, it, vi} from "vitest";
import {CleanroomError} from "../../src/core/common/errors.js";
import type {SendMessageCallbacks} from "../../src/core/node/turns/types.js";
import {servicesOf} from "../helpers/coreServices.js";
import {inProcessCoreClientForFile} from "../helpers/inProcessCoreClient.js";

/**
 * The draft (the composer's unsent text, kept in the core) never loses what the user typed: a
 * prompt stored as a message clears it; a prompt refused, or dropped by a failed turn, goes back
 * into it, unless the user has typed something else since. The turn is a fake (no model) on the
 * real store; the rules are TurnRunner's.
 */
const opened = inProcessCoreClientForFile("draft-rules");

type FakeTurn = "refused" | "fails, prompt kept" | "fails, prompt dropped";

/** The next turn stores its prompt (unless refused), then waits for `finish()` to fail as `turn` says. */
function nextTurn(turn: FakeTurn) {
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
        finish = resolve;
    });
    vi.spyOn(opened.core, "sendMessage").mockImplementationOnce(async ({conversationId, text}, callbacks: SendMessageCallbacks = {}) => {
        if (turn === "refused")
            throw new CleanroomError("CONTEXT_OVERFLOW", "This turn does not fit the context.");
        const {store} = servicesOf(opened.core);
        const {user, reply} = store.appendTurn(conversationId, text, {route: "cloud", routeReason: "fake"});
        callbacks.onStarted?.({userMessageId: user.id, assistantMessageId: reply.id});
        await finished;
        if (turn === "fails, prompt dropped") {
            store.deleteMessage(reply.id);
            store.deleteMessage(user.id);
        }
        throw new CleanroomError("CLOUD_REQUEST_FAILED", "The cloud endpoint did not answer.");
    });
    return {finish};
}

async function draftOf(conversationId: string) {
    return (await opened.client.call("conversations.get", {conversationId})).draft;
}

/** Resolves with the next `turn.error` the client hears for `conversationId`. */
function nextTurnError(conversationId: string) {
    return new Promise<void>((resolve) => {
        const stop = opened.client.subscribe("turn.error", (payload) => {
            if (payload.conversationId === conversationId) {
                stop();
                resolve();
            }
        });
    });
}

describe("the draft keeps what the user typed", () => {
    it("a prompt refused before it starts goes back into the draft, and no message is stored", async () => {
        const {id} = await opened.client.call("conversations.create", {});
        await opened.client.call("conversations.saveDraft", {conversationId: id, text: "Plan a trip to Lisbon"});
        nextTurn("refused");

        await expect(opened.client.call("chat.send", {conversationId: id, text: "Plan a trip to Lisbon"})).rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});
        expect(await draftOf(id)).toBe("Plan a trip to Lisbon");
        expect((await opened.client.call("conversations.get", {conversationId: id})).messages).toEqual([]);
    });

    it("a prompt stored as a message clears the draft, and a failure that keeps the prompt leaves it empty", async () => {
        const {id} = await opened.client.call("conversations.create", {});
        await opened.client.call("conversations.saveDraft", {conversationId: id, text: "Summarise my notes"});
        const turn = nextTurn("fails, prompt kept");

        await opened.client.call("chat.send", {conversationId: id, text: "Summarise my notes"});
        expect(await draftOf(id)).toBe("");
        const failed = nextTurnError(id);
        turn.finish();
        await failed;
        expect(await draftOf(id)).toBe("");
        expect((await opened.client.call("conversations.get", {conversationId: id})).messages.map((message) => message.content)).toContain("Summarise my notes");
    });

    it("a failed turn that drops its prompt puts it back into the draft", async () => {
        const {id} = await opened.client.call("conversations.create", {});
        const turn = nextTurn("fails, prompt dropped");
        await opened.client.call("chat.send", {conversationId: id, text: "Translate this letter"});
        const failed = nextTurnError(id);
        turn.finish();
        await failed;
        expect(await draftOf(id)).toBe("Translate this letter");
    });

    it("what the user typed while the turn ran is not overwritten by the dropped prompt", async () => {
        const {id} = await opened.client.call("conversations.create", {});
        const turn = nextTurn("fails, prompt dropped");
        await opened.client.call("chat.send", {conversationId: id, text: "First question"});
        await opened.client.call("conversations.saveDraft", {conversationId: id, text: "A second thought"});
        const failed = nextTurnError(id);
        turn.finish();
        await failed;
        expect(await draftOf(id)).toBe("A second thought");
    });
});

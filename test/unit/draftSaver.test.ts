import {beforeEach, describe, expect, it, vi} from "vitest";
import {DraftSaver, draftSaveDelayMs} from "../../renderer/src/DraftSaver.js";
import {maxMessageTextLength} from "../../src/core/common/api/index.js";

/** The composer's draft saving, without a browser: what reaches the core, and when. */
function saver() {
    const saved: Array<[string, string]> = [];
    return {drafts: new DraftSaver((conversationId, text) => saved.push([conversationId, text])), saved};
}

/** Types `text` into `conversationId`'s composer a character at a time, 50 ms apart. */
async function type(drafts: DraftSaver, conversationId: string, text: string) {
    for (let end = 1; end <= text.length; end++) {
        drafts.changed(conversationId, text.slice(0, end), {editing: false});
        await vi.advanceTimersByTimeAsync(50);
    }
}

beforeEach(() => {
    vi.useFakeTimers();
    return () => vi.useRealTimers();
});

describe("the composer's draft", () => {
    it("is saved once typing pauses, not at each key", async () => {
        const {drafts, saved} = saver();
        await type(drafts, "trip", "Lisbon");
        expect(saved).toEqual([]);

        await vi.advanceTimersByTimeAsync(draftSaveDelayMs - 50 - 1);
        expect(saved).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(saved).toEqual([["trip", "Lisbon"]]);
    });

    it("is saved at once, to the conversation it was typed in, when the user switches conversation or closes the page", async () => {
        const {drafts, saved} = saver();
        drafts.changed("trip", "half a thought", {editing: false});
        drafts.flush();
        expect(saved).toEqual([["trip", "half a thought"]]);

        await vi.advanceTimersByTimeAsync(draftSaveDelayMs * 10);
        drafts.flush();
        expect(saved, "nothing is saved twice").toHaveLength(1);
    });

    it("is not saved once sent: the sent text does not come back as a draft", async () => {
        const {drafts, saved} = saver();
        drafts.changed("trip", "Send me", {editing: false});
        drafts.cancel();
        await vi.advanceTimersByTimeAsync(draftSaveDelayMs * 10);
        drafts.flush();
        expect(saved).toEqual([]);
    });

    it("is not saved while a prompt is being edited, nor when longer than a message can be", async () => {
        const {drafts, saved} = saver();
        drafts.changed("trip", "the prompt being edited", {editing: true});
        await vi.advanceTimersByTimeAsync(draftSaveDelayMs);

        drafts.changed("trip", "short", {editing: false});
        drafts.changed("trip", "x".repeat(maxMessageTextLength + 1), {editing: false});
        await vi.advanceTimersByTimeAsync(draftSaveDelayMs);
        drafts.flush();
        expect(saved, "the too-long text also drops the shorter one still pending").toEqual([]);

        drafts.changed("trip", "x".repeat(maxMessageTextLength), {editing: false});
        await vi.advanceTimersByTimeAsync(draftSaveDelayMs);
        expect(saved.map(([, text]) => text.length)).toEqual([maxMessageTextLength]);
    });
});

import {describe, expect, it} from "vitest";
import {SseEventQueue} from "../../src/serve/SseEventQueue.js";

/** A write that finishes only when the test says so, recording what it was given. */
function heldWrites() {
    const written: string[] = [];
    const finish: Array<(error?: Error) => void> = [];
    const write = (text: string) => new Promise<void>((resolve, reject) => {
        written.push(text);
        finish.push((error) => error == null ? resolve() : reject(error));
    });
    return {written, finish, write};
}

describe("SseEventQueue: a streamed reply's events", () => {
    it("go out in order, each its own event; those that come during a write leave together in the next one", async () => {
        const {written, finish, write} = heldWrites();
        const events = new SseEventQueue(write);
        events.push("{\"a\":1}");
        events.push("{\"b\":2}");
        events.push("[DONE]");
        expect(written).toEqual(["data: {\"a\":1}\n\n"]);
        finish.shift()!();
        await expect.poll(() => written.length).toBe(2);
        expect(written[1]).toBe("data: {\"b\":2}\n\ndata: [DONE]\n\n");
        const flushed = events.flush();
        finish.shift()!();
        await flushed;
        expect(written.join("")).toBe("data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n");
    });

    it("a failed write (the client left) fails the flush, and later events are dropped, not written", async () => {
        const {written, finish, write} = heldWrites();
        const events = new SseEventQueue(write);
        events.push("one");
        finish.shift()!(new Error("the client left"));
        await expect(events.flush()).rejects.toThrow("the client left");
        events.push("two");
        expect(written).toEqual(["data: one\n\n"]);
    });
});

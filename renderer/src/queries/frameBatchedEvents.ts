import type {QueryClient} from "@tanstack/react-query";
import type {ApiEventPayload} from "../../../src/core/common/api/index.js";
import {applyCoreEvent, type CacheEvent} from "./coreEventCache.js";

/** Runs `flush` before the next frame is drawn; returns how to call it off. */
export type FrameScheduler = (flush: () => void) => () => void;

const nextAnimationFrame: FrameScheduler = (flush) => {
    const frame = requestAnimationFrame(flush);
    return () => cancelAnimationFrame(frame);
};

/**
 * Core events into the cache, a streamed reply's text at most once a frame: a small model streams faster than the screen
 * is drawn, and each piece of text applied alone rendered and laid out the chat again (a conversation's cached copy is
 * replaced on each). Text pieces of one message that arrive within a frame are applied as one, in order; any other event
 * first applies the text held back, so events keep their order (a turn's last words before its end).
 */
export class FrameBatchedEvents {
    private readonly _queryClient: QueryClient;
    private readonly _schedule: FrameScheduler;
    private readonly _heldText = new Map<string, ApiEventPayload<"message.text">>();
    private _cancelFrame: (() => void) | null = null;

    public constructor(queryClient: QueryClient, schedule: FrameScheduler = nextAnimationFrame) {
        this._queryClient = queryClient;
        this._schedule = schedule;
    }

    public apply<E extends CacheEvent>(event: E, payload: ApiEventPayload<E>): void {
        if (event === "message.text") {
            const text = payload as ApiEventPayload<"message.text">;
            const key = `${text.conversationId}\n${text.messageId}`;
            const held = this._heldText.get(key);
            this._heldText.set(key, held == null ? text : {...held, text: held.text + text.text});
            this._cancelFrame ??= this._schedule(() => {
                this._cancelFrame = null;
                this.flush();
            });
            return;
        }
        this.flush();
        applyCoreEvent(this._queryClient, event, payload);
    }

    /** Applies the text held back now. */
    public flush(): void {
        this._cancelFrame?.();
        this._cancelFrame = null;
        const held = [...this._heldText.values()];
        this._heldText.clear();
        for (const text of held)
            applyCoreEvent(this._queryClient, "message.text", text);
    }

    /** Drops the text held back (the cache it was for is being emptied). */
    public dispose(): void {
        this._cancelFrame?.();
        this._cancelFrame = null;
        this._heldText.clear();
    }
}

import {createBirpc, type BirpcReturn} from "birpc";
import {DisposeAggregator} from "lifecycle-utils";
import type {RpcChannel} from "./RpcChannel.js";

export type ChannelBirpcOptions<Remote extends object> = {
    /**
     * The answer to a request for any name that is not an own key of the local functions
     * (`constructor`, `toString`, `valueOf`… are never dispatched).
     */
    refuse: (name: string) => unknown,
    /** How long a call to the other side waits for its answer, in ms; `-1` waits until the channel closes. */
    timeoutMs: number,
    /** The other side's functions that are only ever sent as events (no answer awaited). Defaults to none. */
    eventNames?: Array<keyof Remote & string>,
    /** What the calls still waiting are rejected with when the channel closes. Defaults to `"The connection closed."`. */
    closedMessage?: string
};

export type ChannelBirpc<Remote extends object, Local extends object> = {
    /** Calls go through `$call` / `$callEvent` only: there is no proxy whose every property is a remote call. */
    rpc: BirpcReturn<Remote, Local, false>,
    /** Stops listening and rejects the calls still waiting (with `error`, else `closedMessage`). Also runs when the channel closes. */
    close(error?: Error): void
};

/** Longest method name shown back in a refusal. */
const shownNameLength = 100;

/**
 * birpc over an `RpcChannel`, hardened for a peer that may send anything: only own keys of
 * `functions` are dispatched (never prototype members), the functions run unbound (never with
 * the rpc object as `this`), a message that is not a birpc request or response is dropped, and
 * no failure of a peer's message escapes as an unhandled rejection.
 */
export function createChannelBirpc<Remote extends object, Local extends object>(
    functions: Local, channel: RpcChannel, {refuse, timeoutMs, eventNames = [], closedMessage = "The connection closed."}: ChannelBirpcOptions<Remote>
): ChannelBirpc<Remote, Local> {
    /** The channel listeners this side added, removed when it closes. */
    const listeners = new DisposeAggregator();
    const rpc = createBirpc<Remote, Local, false>(functions, {
        post: (message) => channel.post(message),
        on: (handler) => {
            listeners.add(channel.onMessage(handler));
        },
        deserialize: (message: unknown) => {
            if (!isBirpcMessage(message))
                throw new Error("not a birpc message");
            return message;
        },
        resolver: (name, resolved) => Object.hasOwn(functions, name) ? resolved : () => refuse(shownName(name)),
        bind: "functions",
        proxify: false,
        eventNames,
        timeout: timeoutMs,
        // A peer's malformed message, or a peer gone mid-reply, is not this side's failure.
        onGeneralError: () => true
    });

    const close = (error = new Error(closedMessage)) => {
        if (!rpc.$closed)
            rpc.$close(error);
        listeners.dispose();
    };
    listeners.add(channel.onClose(() => close()));
    return {rpc, close};
}

/** A request `{t: "q", m: string, a: array}` or a response `{t: "s", i: string}`, as birpc sends them. */
function isBirpcMessage(message: unknown): boolean {
    if (typeof message !== "object" || message === null || Array.isArray(message))
        return false;

    const {t, m, a, i} = message as Record<string, unknown>;
    if (t === "q")
        return typeof m === "string" && Array.isArray(a) && (i === undefined || typeof i === "string");
    return t === "s" && typeof i === "string";
}

function shownName(name: string) {
    return name.length > shownNameLength ? `${name.slice(0, shownNameLength)}…` : name;
}

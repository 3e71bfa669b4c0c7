import {InvalidInputError} from "../../common/errors.js";
import {createChannelBirpc, type ClientSideFunctions, type CoreSideFunctions, type RpcChannel} from "../../common/rpc/index.js";
import type {CoreService} from "./createCoreService.js";

/**
 * How long a call from the core to a client waits for its answer. The core only sends events
 * today (nothing is awaited), but no call of the core may ever wait on a client forever.
 */
export const coreToClientTimeoutMs = 30_000;

/**
 * Answers calls and forwards every event over one channel (a WebSocket, a MessagePort, an
 * in-process pair). Only the contract's door (`call`) is dispatched; any other name a peer
 * sends is answered INVALID_INPUT. Returns the function that detaches; it also detaches when
 * the channel closes.
 */
export function serveCoreOverChannel(service: CoreService, channel: RpcChannel): () => void {
    // This channel's own identity in the core: what it uploads is its own, and goes when it closes.
    const connection = {};
    const functions: CoreSideFunctions = {
        call: (method, input) => service.call(method, input, connection)
    };
    const {rpc, close} = createChannelBirpc<ClientSideFunctions, CoreSideFunctions>(functions, channel, {
        refuse: (name) => ({ok: false, error: new InvalidInputError("the RPC", [`no function "${name}"; only "call" is answered`]).toWire()}),
        timeoutMs: coreToClientTimeoutMs,
        eventNames: ["event"]
    });
    const stopEvents = service.events.onAny((event, payload) => {
        if (!rpc.$closed)
            void rpc.$callEvent("event", event, payload).catch(() => undefined);
    });

    let detached = false;
    const detach = () => {
        if (detached)
            return;

        detached = true;
        service.disconnected?.(connection);
        stopEvents.dispose();
        stopOnClose();
        close();
    };
    const stopOnClose = channel.onClose(detach);
    return detach;
}

import {createBirpc} from "birpc";
import type {ClientSideFunctions, CoreSideFunctions, RpcChannel} from "../../common/rpc/index.js";
import type {CoreService} from "./createCoreService.js";

/**
 * Answers calls and forwards every event over one channel (a WebSocket, a MessagePort, an
 * in-process pair). Returns the function that detaches; it also detaches when the channel closes.
 */
export function serveCoreOverChannel(service: CoreService, channel: RpcChannel): () => void {
    const unsubscribers: Array<() => void> = [];
    const functions: CoreSideFunctions = {
        call: (method, input) => service.call(method, input)
    };
    const rpc = createBirpc<ClientSideFunctions, CoreSideFunctions>(functions, {
        post: (message) => channel.post(message),
        on: (handler) => {
            unsubscribers.push(channel.onMessage(handler));
        },
        eventNames: ["event"],
        timeout: -1,
        // A peer that went away mid-reply is not the core's failure.
        onGeneralError: () => true
    });
    unsubscribers.push(service.events.onAny((event, payload) => {
        if (!rpc.$closed)
            void rpc.event.asEvent(event, payload).catch(() => undefined);
    }));

    let detached = false;
    const detach = () => {
        if (detached)
            return;

        detached = true;
        rpc.$close();
        for (const unsubscribe of unsubscribers.splice(0))
            unsubscribe();
    };
    unsubscribers.push(channel.onClose(detach));
    return detach;
}

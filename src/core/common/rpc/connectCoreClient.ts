import {coreEvents, isApiEvent, type ApiEvent, type ApiEventPayload, type ApiInput, type ApiMethod, type ApiOutput, type CallResult} from "../api/index.js";
import type {CoreClient} from "./CoreClient.js";
import {createChannelBirpc} from "./createChannelBirpc.js";
import {RemoteCallError} from "./RemoteCallError.js";
import type {ClientSideFunctions, CoreSideFunctions, RpcChannel} from "./RpcChannel.js";

export type ConnectedCoreClient = CoreClient & {
    /** Stops listening and rejects calls still waiting. */
    close(): void
};

/** The client end of the RPC layer over any channel. */
export function connectCoreClient(channel: RpcChannel): ConnectedCoreClient {
    const listeners = new Map<ApiEvent, Set<(payload: never) => void>>();
    const functions: ClientSideFunctions = {
        event(name, payload) {
            if (!isApiEvent(name))
                return;

            // Events are checked against the contract like calls are: what does not match is dropped.
            const parsed = coreEvents[name].safeParse(payload);
            if (!parsed.success)
                return;

            for (const listener of listeners.get(name) ?? [])
                listener(parsed.data as never);
        }
    };

    const {rpc, close} = createChannelBirpc<CoreSideFunctions, ClientSideFunctions>(functions, channel, {
        // The core calls nothing else here; any other name is dropped.
        refuse: () => undefined,
        // Replies may take as long as a model load; a closed channel rejects them instead.
        timeoutMs: -1,
        closedMessage: "The connection to the core closed."
    });

    return {
        async call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>> {
            if (rpc.$closed)
                throw new RemoteCallError(method, {code: "INTERNAL", message: "Not connected to the core.", details: {disconnected: true}});

            let result: CallResult;
            try {
                result = await rpc.$call("call", method, input) as CallResult;
            } catch (error) {
                throw new RemoteCallError(method, {
                    code: "INTERNAL",
                    message: error instanceof Error ? error.message : "The connection to the core failed.",
                    details: {disconnected: true}
                });
            }
            if (!result.ok)
                throw new RemoteCallError(method, result.error);

            return result.value as ApiOutput<M>;
        },
        subscribe<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void) {
            let set = listeners.get(event);
            if (set == null) {
                set = new Set();
                listeners.set(event, set);
            }
            set.add(listener as (payload: never) => void);
            return () => set.delete(listener as (payload: never) => void);
        },
        close: () => close()
    };
}

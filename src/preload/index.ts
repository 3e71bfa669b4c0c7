import {contextBridge, ipcRenderer} from "electron";
import {apiEvents, isApiEvent, isApiMethod, type ApiEvent, type CallResult} from "../core/common/api/index.js";
import {InvalidInputError, toWireError} from "../core/common/errors.js";
import {bridgeGlobalName, connectCoreClient, electronIpcChannels as ipcChannels, type CleanroomBridge, type ConnectedCoreClient, type RpcChannel} from "../core/common/rpc/index.js";

/**
 * The preload: exposes one curated object, `window.cleanroom`, with contract calls and
 * contract events only. It holds the MessagePort to the core; the page never sees it.
 */
const listeners = new Map<ApiEvent, Set<(payload: unknown) => void>>();
let client: ConnectedCoreClient | null = null;
const waitingForCore: Array<() => void> = [];

function dispatch(event: ApiEvent, payload: unknown) {
    for (const listener of listeners.get(event) ?? [])
        listener(payload);
}

function portChannel(port: MessagePort): RpcChannel {
    const channel: RpcChannel = {
        post: (message) => port.postMessage(message),
        onMessage(listener) {
            const handler = (event: MessageEvent) => listener(event.data);
            port.addEventListener("message", handler);
            return () => port.removeEventListener("message", handler);
        },
        onClose(listener) {
            port.addEventListener("close", listener);
            return () => port.removeEventListener("close", listener);
        }
    };
    port.start();
    return channel;
}

ipcRenderer.on(ipcChannels.corePort, (event, info: {reason?: string} | undefined) => {
    const port = event.ports[0];
    if (port == null)
        return;
    client?.close();
    const connected = connectCoreClient(portChannel(port));
    client = connected;
    for (const name of apiEvents)
        connected.subscribe(name, (payload) => dispatch(name, payload));
    for (const resume of waitingForCore.splice(0))
        resume();
    if (info?.reason === "restarted")
        dispatch("core.status", {state: "restarted", model: null, pendingRestart: [], message: "The core process restarted. Every session was ended; history is intact."});
});

ipcRenderer.on(ipcChannels.coreExited, () => {
    client?.close();
    client = null;
    dispatch("core.status", {state: "disconnected", model: null, pendingRestart: [], message: "The core process stopped unexpectedly. Restarting it…"});
});

ipcRenderer.send(ipcChannels.requestCorePort);

function coreClient(): Promise<ConnectedCoreClient> {
    if (client != null)
        return Promise.resolve(client);
    return new Promise((resolve) => waitingForCore.push(() => resolve(client!)));
}

const bridge: CleanroomBridge = {
    async call(method, input): Promise<CallResult> {
        if (!isApiMethod(method))
            return {ok: false, error: new InvalidInputError("call", ["unknown method"]).toWire()};
        try {
            const connected = await coreClient();
            return {ok: true, value: await connected.call(method, input as never)};
        } catch (error) {
            return {ok: false, error: toWireError(error)};
        }
    },
    subscribe(event, listener) {
        if (!isApiEvent(event) || typeof listener !== "function")
            return () => undefined;
        let set = listeners.get(event);
        if (set == null) {
            set = new Set();
            listeners.set(event, set);
        }
        const own = (payload: unknown) => listener(payload);
        set.add(own);
        return () => set.delete(own);
    }
};

contextBridge.exposeInMainWorld(bridgeGlobalName, bridge);

import type {RpcChannel} from "../core/common/rpc/index.js";

/**
 * The parts of Electron's `MessagePortMain` the channel uses, described here so the core never
 * imports Electron.
 */
export type MessagePortLike = {
    postMessage(message: unknown): void,
    on(event: "message", listener: (event: {data: unknown}) => void): unknown,
    on(event: "close", listener: () => void): unknown,
    off(event: "message", listener: (event: {data: unknown}) => void): unknown,
    off(event: "close", listener: () => void): unknown,
    start(): void
};

/** A MessagePort (Electron's utility-process side) as an RPC channel; data is structured-cloned by the port. */
export function messagePortChannel(port: MessagePortLike): RpcChannel {
    const channel: RpcChannel = {
        post(message) {
            port.postMessage(message);
        },
        onMessage(listener) {
            const handler = (event: {data: unknown}) => listener(event.data);
            port.on("message", handler);
            return () => port.off("message", handler);
        },
        onClose(listener) {
            port.on("close", listener);
            return () => port.off("close", listener);
        }
    };
    port.start();
    return channel;
}

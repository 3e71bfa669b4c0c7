import type {RpcChannel} from "../../../src/core/common/rpc/index.js";

/** Opens a WebSocket and resolves with it as an RPC channel once open; rejects if it never opens. */
export function openWebSocketChannel(url: string): Promise<RpcChannel> {
    return new Promise((resolve, reject) => {
        const socket = new WebSocket(url);
        let opened = false;
        socket.addEventListener("open", () => {
            opened = true;
            resolve({
                post(message) {
                    if (socket.readyState === WebSocket.OPEN)
                        socket.send(JSON.stringify(message));
                },
                onMessage(listener) {
                    const handler = (event: MessageEvent) => {
                        if (typeof event.data !== "string")
                            return;
                        try {
                            listener(JSON.parse(event.data));
                        } catch {
                            // not ours: dropped
                        }
                    };
                    socket.addEventListener("message", handler);
                    return () => socket.removeEventListener("message", handler);
                },
                onClose(listener) {
                    if (socket.readyState === WebSocket.CLOSED) {
                        queueMicrotask(listener);
                        return () => undefined;
                    }
                    socket.addEventListener("close", listener);
                    return () => socket.removeEventListener("close", listener);
                }
            });
        });
        socket.addEventListener("close", () => {
            if (!opened)
                reject(new Error("The core refused the connection or is not running."));
        });
    });
}

import type {WebSocket} from "ws";
import type {RpcChannel} from "../../common/rpc/index.js";

/** A server-side `ws` socket as an RPC channel: JSON text frames; frames that are not JSON are dropped. */
export function webSocketChannel(socket: WebSocket): RpcChannel {
    return {
        post(message) {
            if (socket.readyState === socket.OPEN)
                socket.send(JSON.stringify(message));
        },
        onMessage(listener) {
            const handler = (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
                if (isBinary)
                    return;

                let message: unknown;
                try {
                    message = JSON.parse(Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8"));
                } catch {
                    return;
                }
                listener(message);
            };
            socket.on("message", handler);
            return () => socket.off("message", handler);
        },
        onClose(listener) {
            socket.on("close", listener);
            return () => socket.off("close", listener);
        }
    };
}

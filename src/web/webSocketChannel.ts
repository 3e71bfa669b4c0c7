import type {WebSocket} from "ws";
import type {RpcChannel} from "../core/common/rpc/index.js";

/**
 * A `ws` socket as an RPC channel: JSON text frames; frames that are not JSON are dropped. A
 * socket error (a peer breaking the protocol: text that is not UTF-8, an unmasked or reserved
 * frame, a message over the size limit) is that socket's end only: `ws` has already sent the
 * close frame with the matching code (1007, 1002, 1009) and closes it; the process lives on.
 */
export function webSocketChannel(socket: WebSocket): RpcChannel {
    socket.on("error", () => undefined);
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

import type {RpcChannel} from "./RpcChannel.js";

/**
 * Two linked channels in one process (tests, and hosts that embed the core). Messages are
 * structured-cloned and delivered asynchronously, as over a real port.
 */
export function createInProcessChannelPair(): [RpcChannel, RpcChannel, () => void] {
    const listeners: [Set<(message: unknown) => void>, Set<(message: unknown) => void>] = [new Set(), new Set()];
    const closeListeners = new Set<() => void>();
    let closed = false;

    const side = (own: 0 | 1): RpcChannel => ({
        post(message) {
            if (closed)
                return;

            const copy = structuredClone(message);
            queueMicrotask(() => {
                for (const listener of listeners[own === 0 ? 1 : 0])
                    listener(copy);
            });
        },
        onMessage(listener) {
            listeners[own].add(listener);
            return () => listeners[own].delete(listener);
        },
        onClose(listener) {
            closeListeners.add(listener);
            return () => closeListeners.delete(listener);
        }
    });

    const close = () => {
        if (closed)
            return;

        closed = true;
        for (const listener of closeListeners)
            listener();
    };
    return [side(0), side(1), close];
}

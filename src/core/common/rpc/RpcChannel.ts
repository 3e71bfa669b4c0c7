/**
 * One duplex message pipe under the RPC layer: a WebSocket, a MessagePort, or an in-process
 * pair. It carries plain data; each channel serializes as its medium needs.
 */
export type RpcChannel = {
    post(message: unknown): void,
    /** Returns the function that removes the listener. */
    onMessage(listener: (message: unknown) => void): () => void,
    /** Called once when the pipe closes for good. */
    onClose(listener: () => void): () => void
};

/** The functions the core side answers over birpc. */
export type CoreSideFunctions = {
    call(method: string, input: unknown): Promise<unknown>
};

/** The functions the client side answers over birpc (events only, no reply expected). */
export type ClientSideFunctions = {
    event(name: string, payload: unknown): void
};

import type {ApiEvent, ApiMethod, CallResult} from "../api/index.js";

/**
 * The one object the Electron preload exposes to the page (`window.cleanroom`): contract
 * calls and contract events, nothing else. Call outcomes travel as data, as over any transport.
 */
export type CleanroomBridge = {
    call(method: ApiMethod, input: unknown): Promise<CallResult>,
    /** Returns the function that unsubscribes. */
    subscribe(event: ApiEvent, listener: (payload: unknown) => void): () => void
};

/** The global name the bridge is exposed under. */
export const bridgeGlobalName = "cleanroom";

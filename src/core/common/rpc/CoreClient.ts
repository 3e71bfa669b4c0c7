import type {ApiEvent, ApiEventPayload, ApiInput, ApiMethod, ApiOutput} from "../api/index.js";

/**
 * What a front end holds: typed calls and events, whatever carries them. Failed calls reject
 * with a `RemoteCallError` carrying the core's error code.
 */
export interface CoreClient {
    call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>>;
    /** Returns the function that unsubscribes. */
    subscribe<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void): () => void;
}

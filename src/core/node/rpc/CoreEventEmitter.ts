import type {ApiEvent, ApiEventPayload} from "../../common/api/index.js";

export type AnyEventListener = <E extends ApiEvent>(event: E, payload: ApiEventPayload<E>) => void;

/** The core's outgoing events, typed by the contract. A throwing listener never stops the others. */
export class CoreEventEmitter {
    private readonly _listeners = new Set<AnyEventListener>();

    public emit<E extends ApiEvent>(event: E, payload: ApiEventPayload<E>): void {
        for (const listener of this._listeners) {
            try {
                listener(event, payload);
            } catch {
                // A broken transport must not break the core or the other listeners.
            }
        }
    }

    /** Every event; returns the function that removes the listener. */
    public onAny(listener: AnyEventListener): () => void {
        this._listeners.add(listener);
        return () => this._listeners.delete(listener);
    }

    public on<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void): () => void {
        return this.onAny((name: ApiEvent, payload: unknown) => {
            if (name === event)
                listener(payload as ApiEventPayload<E>);
        });
    }
}

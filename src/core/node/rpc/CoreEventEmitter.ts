import {EventRelay, type EventRelayListenerHandle} from "lifecycle-utils";
import type {ApiEvent, ApiEventPayload} from "../../common/api/index.js";

export type AnyEventListener = <E extends ApiEvent>(event: E, payload: ApiEventPayload<E>) => void;

type AnyEvent = {[E in ApiEvent]: {event: E, payload: ApiEventPayload<E>}}[ApiEvent];

/** The core's outgoing events, typed by the contract. A throwing listener (a broken transport) is logged and never stops the others. */
export class CoreEventEmitter {
    private readonly _relay = new EventRelay<AnyEvent>();

    public emit<E extends ApiEvent>(event: E, payload: ApiEventPayload<E>): void {
        this._relay.dispatchEvent({event, payload} as AnyEvent);
    }

    /** Every event; dispose the handle to stop listening. */
    public onAny(listener: AnyEventListener): EventRelayListenerHandle {
        return this._relay.createListener(({event, payload}) => listener(event, payload as never));
    }

    public on<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void): EventRelayListenerHandle {
        return this._relay.createListener((emitted) => {
            if (emitted.event === event)
                listener(emitted.payload as ApiEventPayload<E>);
        });
    }
}

import {useEffect, useRef} from "react";
import type {ApiEvent, ApiEventPayload} from "../../../src/core/common/api/index.js";
import type {CoreClient} from "../../../src/core/common/rpc/index.js";

/** Subscribes for the component's lifetime; the latest listener is always the one called. */
export function useCoreEvent<E extends ApiEvent>(client: CoreClient, event: E, listener: (payload: ApiEventPayload<E>) => void) {
    const latest = useRef(listener);
    latest.current = listener;
    useEffect(() => client.subscribe(event, (payload) => latest.current(payload)), [client, event]);
}

import {useCallback, useSyncExternalStore} from "react";
import type {AppCoreClient} from "../transport/AppCoreClient.js";

/** Whether the link to the core is up now (queries wait for it). */
export function useConnected(client: AppCoreClient): boolean {
    const subscribe = useCallback((onChange: () => void) => client.onConnectionChange(onChange), [client]);
    return useSyncExternalStore(subscribe, () => client.connection === "connected");
}

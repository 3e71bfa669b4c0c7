import {QueryClient, QueryClientProvider} from "@tanstack/react-query";
import {useEffect, useState, type ReactNode} from "react";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {cacheEvents} from "./coreEventCache.js";
import {FrameBatchedEvents} from "./frameBatchedEvents.js";

/**
 * The cache of what the core knows, for the app inside the lock: created when the app shows, emptied
 * when it goes (the app locked), so the page keeps no decrypted text. Core events write into it
 * (`applyCoreEvent`, streamed text at most once a frame); nothing is asked again on a timer or on focus, only when an event or a
 * change makes it stale.
 */
export function CoreQueryProvider({client, children}: {client: AppCoreClient, children: ReactNode}) {
    const [queryClient] = useState(createCoreQueryClient);
    useEffect(() => {
        const events = new FrameBatchedEvents(queryClient);
        const stops = cacheEvents.map((event) => client.subscribe(event, (payload) => events.apply(event, payload)));
        return () => {
            for (const stop of stops)
                stop();
            events.dispose();
            queryClient.clear();
        };
    }, [client, queryClient]);
    return <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>;
}

export function createCoreQueryClient() {
    return new QueryClient({
        defaultOptions: {
            queries: {
                // The core is on this machine: the browser's idea of being online does not matter.
                networkMode: "always",
                // Events keep the cache current; a query is asked again only once marked stale.
                staleTime: Infinity,
                refetchOnWindowFocus: false,
                refetchOnReconnect: false,
                // A refusal is an answer (shown as a banner), not a network blip to try again.
                retry: false
            },
            mutations: {networkMode: "always", retry: false}
        }
    });
}

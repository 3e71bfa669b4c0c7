import {useEffect, useState} from "react";
import type {SearchHit} from "../../../src/core/common/types.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";

const debounceMs = 150;

/**
 * The sidebar's search: titles and message text, searched by the core (full-text, inside the
 * encrypted database), a moment after the user stops typing. Null while the query is empty.
 */
export function useConversationSearch(client: AppCoreClient, query: string, onError: (error: unknown) => void): SearchHit[] | null {
    const [hits, setHits] = useState<SearchHit[] | null>(null);
    useEffect(() => {
        const text = query.trim();
        if (text === "") {
            setHits(null);
            return;
        }
        let current = true;
        const timer = setTimeout(() => {
            client.call("conversations.search", {text}).then((found) => {
                if (current)
                    setHits(found);
            }, (error: unknown) => {
                if (current)
                    onError(error);
            });
        }, debounceMs);
        return () => {
            current = false;
            clearTimeout(timer);
        };
    }, [client, query, onError]);
    return hits;
}

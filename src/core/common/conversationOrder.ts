/** What the list order reads of a conversation. */
export type ListOrderKey = {id: string, pinned: boolean, updatedAt: number};

/**
 * The one order of conversations everywhere: each store's list, the merged stored-and-incognito
 * list, search, and the app's "most recent". Pinned first, then the most recently active.
 * `updatedAt` does not tie within a process (the stores take it from `ActivityClock`), nor within
 * one database file (each write takes a time after the file's newest); the id only orders the
 * rare tie between another process's write and an incognito one, and always the same way.
 */
export function compareListOrder(a: ListOrderKey, b: ListOrderKey): number {
    return Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The conversation active last, pinned or not; undefined for none. */
export function mostRecentlyActive<T extends ListOrderKey>(conversations: readonly T[]): T | undefined {
    return conversations.reduce<T | undefined>((latest, conversation) =>
        latest == null || compareListOrder({...conversation, pinned: false}, {...latest, pinned: false}) < 0 ? conversation : latest, undefined);
}

/**
 * The simulated server's KV memory: a fixed number of pages, each holding the text of one
 * slice of one request's prompt. A page keeps its content after its request ends (stale)
 * until another request overwrites it, as GPU KV memory does; `zero()` is what an honest
 * server's isolation amounts to.
 */
export type KvPage = {
    readonly index: number,
    tenant: string,
    requestId: string,
    /** Position of this slice within its request's prompt. */
    slice: number,
    text: string,
    /** Write order, for least-recently-written reuse. */
    writtenAt: number
};

/** Consecutive slices of one earlier request, as they sit in stale pages. */
export type StaleRun = {
    tenant: string,
    requestId: string,
    pages: KvPage[],
    text: string
};

export class PagePool {
    public readonly capacity: number;
    private readonly _pages: Array<KvPage | null>;
    private _clock = 0;

    public constructor(capacity: number) {
        if (!Number.isInteger(capacity) || capacity < 1)
            throw new RangeError(`A page pool needs at least one page, got ${capacity}`);
        this.capacity = capacity;
        this._pages = new Array<KvPage | null>(capacity).fill(null);
    }

    /** Pages holding data (of any request), for inspection. */
    public get usedPages() {
        return this._pages.filter((page) => page != null).length;
    }

    /**
     * Writes the slices into the least recently written pages, never touching `reserved`
     * pages. Slices beyond the free room are dropped (the caller decides whether that may
     * happen). Returns how many slices were written.
     */
    public write(tenant: string, requestId: string, slices: readonly string[], reserved: ReadonlySet<number> = new Set()) {
        const order = this._pages
            .map((page, index) => ({index, writtenAt: page?.writtenAt ?? -1}))
            .filter(({index}) => !reserved.has(index))
            .sort((a, b) => a.writtenAt - b.writtenAt || a.index - b.index);
        const count = Math.min(slices.length, order.length);
        for (let slice = 0; slice < count; slice++) {
            const index = order[slice]!.index;
            this._pages[index] = {index, tenant, requestId, slice, text: slices[slice]!, writtenAt: this._clock++};
        }
        return count;
    }

    /** Zeroes every page of the request (what an honest server's isolation guarantees). */
    public zero(requestId: string) {
        for (let index = 0; index < this.capacity; index++) {
            if (this._pages[index]?.requestId === requestId)
                this._pages[index] = null;
        }
    }

    /** The `count` most recently written pages not of `excludeRequestId`. */
    public mostRecentStale(count: number, excludeRequestId: string) {
        return this._pages
            .filter((page): page is KvPage => page != null && page.requestId !== excludeRequestId)
            .sort((a, b) => b.writtenAt - a.writtenAt)
            .slice(0, Math.max(0, count));
    }

    /** Groups pages into runs of consecutive slices of one request, each run in prompt order. */
    public static runsOf(pages: readonly KvPage[]): StaleRun[] {
        const byRequest = new Map<string, KvPage[]>();
        for (const page of pages) {
            const list = byRequest.get(page.requestId) ?? [];
            list.push(page);
            byRequest.set(page.requestId, list);
        }
        const runs: StaleRun[] = [];
        for (const list of byRequest.values()) {
            list.sort((a, b) => a.slice - b.slice);
            let current: KvPage[] = [];
            for (const page of list) {
                if (current.length > 0 && current[current.length - 1]!.slice + 1 !== page.slice) {
                    runs.push(toRun(current));
                    current = [];
                }
                current.push(page);
            }
            if (current.length > 0)
                runs.push(toRun(current));
        }
        return runs;
    }

    /** Every stale page not of `excludeRequestId`, as runs. */
    public staleRuns(excludeRequestId: string) {
        return PagePool.runsOf(this._pages.filter((page): page is KvPage => page != null && page.requestId !== excludeRequestId));
    }
}

function toRun(pages: KvPage[]): StaleRun {
    return {tenant: pages[0]!.tenant, requestId: pages[0]!.requestId, pages, text: pages.map((page) => page.text).join("")};
}

/** Makes and frees the never-used contexts a `FreshContextReserve` holds. */
export type FreshContextSource<Fresh> = {
    /** A new context: allocated (zero-filled by llama.cpp), nothing evaluated, owned by no one. */
    create(): Promise<Fresh>,
    /** Frees a context that was never used: nothing was evaluated in it, so there is nothing to scrub. */
    discard(fresh: Fresh): Promise<void>
};

/**
 * A few contexts created ahead, off a request's path, each handed out once (`take`) to become one
 * session's own context. A context here was never used: llama.cpp zero-fills its KV buffer when it
 * allocates it and nothing has been evaluated in it, so it holds no one's data, exactly like a
 * context created on the request's path; it is removed from the reserve before it is handed out,
 * so no two sessions ever get the same one. Freeing one (`shrink`, `dispose`) needs no scrub.
 */
export class FreshContextReserve<Fresh> {
    public readonly size: number;
    private readonly _source: FreshContextSource<Fresh>;
    private readonly _ready: Fresh[] = [];
    private readonly _creating = new Set<Promise<void>>();
    /** Contexts being made: counted here until the moment each joins `_ready` (or fails), so `held` never counts one twice. */
    private _creatingCount = 0;
    private _disposed = false;

    public constructor(source: FreshContextSource<Fresh>, size: number) {
        this._source = source;
        this.size = size;
    }

    /** Contexts holding memory: ready, or being created. */
    public get held() {
        return this._ready.length + this._creatingCount;
    }

    /** A ready context, now the caller's alone; null when none is ready. */
    public take(): Fresh | null {
        return this._ready.shift() ?? null;
    }

    /**
     * Starts creating contexts, in the background, until the reserve holds `size`, each only while
     * `hasRoom()` says one more fits. A failed creation is dropped: `take` then finds none, and the
     * session's context is created on its path as without a reserve.
     */
    public refill(hasRoom: () => boolean): void {
        while (!this._disposed && this.held < this.size && hasRoom()) {
            this._creatingCount++;
            const creating: Promise<void> = this._create().finally(() => this._creating.delete(creating));
            this._creating.add(creating);
        }
    }

    private async _create(): Promise<void> {
        let fresh: Fresh;
        try {
            fresh = await this._source.create();
        } catch {
            return;
        } finally {
            this._creatingCount--;
        }
        if (this._disposed)
            await this._source.discard(fresh);
        else
            this._ready.push(fresh);
    }

    /** Frees one context to make room for a session's (waiting for one being created if none is ready); false when it holds none. */
    public async shrink(): Promise<boolean> {
        if (this._ready.length === 0 && this._creatingCount > 0)
            await Promise.race(this._creating);
        const fresh = this._ready.shift();
        if (fresh == null)
            return this._creatingCount > 0;
        await this._source.discard(fresh);
        return true;
    }

    /** Frees a context `take` handed out that its taker could not use after all (never used: nothing to scrub). */
    public async discard(fresh: Fresh): Promise<void> {
        await this._source.discard(fresh);
    }

    /** Frees every context it holds, those being created once they are (the model is being unloaded). */
    public async dispose(): Promise<void> {
        this._disposed = true;
        await Promise.allSettled([...this._creating]);
        await Promise.allSettled(this._ready.splice(0).map((fresh) => this._source.discard(fresh)));
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }
}

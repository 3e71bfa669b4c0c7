/**
 * Writes server-sent events in order, one write at a time: the events that arrive while a write is
 * under way go out together in the next write, each still an event of its own. A streamed reply
 * then costs one write per burst of tokens instead of one per token, which on a small model is
 * most of what a token costs (see docs/local-server.md, throughput).
 */
export class SseEventQueue {
    private readonly _write: (text: string) => Promise<unknown>;
    private _pending: string[] = [];
    private _writing: Promise<void> | null = null;
    private _failure: {error: unknown} | null = null;

    /** `write` sends text as it is (Hono's `stream.write`). */
    public constructor(write: (text: string) => Promise<unknown>) {
        this._write = write;
    }

    /** Queues one event; `data` is one line (JSON without raw line breaks). */
    public push(data: string) {
        if (this._failure != null)
            return;
        this._pending.push(`data: ${data}\n\n`);
        this._writing ??= this._drain();
    }

    /** Resolves once every queued event is written; throws the write's error if one failed. */
    public async flush(): Promise<void> {
        while (this._writing != null)
            await this._writing;
        if (this._failure != null)
            throw this._failure.error;
    }

    private async _drain() {
        try {
            while (this._pending.length > 0) {
                const text = this._pending.join("");
                this._pending = [];
                await this._write(text);
            }
        } catch (error) {
            this._failure = {error};
            this._pending = [];
        } finally {
            this._writing = null;
        }
    }
}

import type {ServerResponse} from "node:http";

/**
 * A server-sent-events reply written straight to Node's response, with the headers Hono's
 * `streamSSE` sends. Hono's stream passes every write through a web `TransformStream` and its
 * reader (several promises and a buffer copy per write): on a small model that cost about a third
 * of what a streamed token costs (docs/local-server.md, throughput). The route then returns
 * `RESPONSE_ALREADY_SENT`.
 */
export class NodeSseResponse {
    private readonly _outgoing: ServerResponse;

    public constructor(outgoing: ServerResponse) {
        this._outgoing = outgoing;
        outgoing.writeHead(200, {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Connection": "keep-alive"
        });
        outgoing.flushHeaders();
    }

    /** Whether the client is gone (the connection closed before the reply ended). */
    public get aborted() {
        return this._outgoing.destroyed && !this._outgoing.writableFinished;
    }

    /** Resolves once `text` is handed to the connection; rejects when the client is gone. */
    public write(text: string): Promise<void> {
        return new Promise((resolve, reject) => {
            if (this.aborted) {
                reject(new Error("The client closed the connection."));
                return;
            }
            this._outgoing.write(text, (error) => error == null ? resolve() : reject(error));
        });
    }

    public end() {
        if (!this._outgoing.writableEnded)
            this._outgoing.end();
    }
}

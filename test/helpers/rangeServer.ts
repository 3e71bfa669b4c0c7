import crypto from "node:crypto";
import http from "node:http";
import https from "node:https";
import type {AddressInfo} from "node:net";

export type ServedRequest = {
    method: string,
    path: string,
    /** The `Host` header as received. */
    host: string,
    /** The `Authorization` header as received, or null. */
    authorization: string | null,
    /** The `Range` header as received, or null. */
    range: string | null,
    status: number,
    /** Body bytes written for this request. */
    bytesSent: number,
    /** True when the server cut the connection on purpose. */
    dropped: boolean,
    /** True when the server stopped sending on purpose and held the connection open (see `stallAfter`). */
    stalled: boolean
};

export type RangeServerOptions = {
    /** Served at `/<name>`; any other path is a 404. */
    files: Record<string, Buffer>,
    /**
     * Decides, per request, whether to cut the connection after some body bytes: return the byte
     * count to drop after, or null to serve the whole response. Called with the 0-based index of
     * the request among the data requests (those with a Range other than `bytes=0-0`).
     */
    dropAfter?: (dataRequestIndex: number, request: {range: string | null, start: number}) => number | null,
    /**
     * Decides, per request other than the 1-byte probe (with a Range or without), whether to stop sending after some body bytes and hold the
     * connection open, sending nothing more, until the client goes away: return the byte count to
     * stall after, or null to serve the whole response. Same arguments as `dropAfter`.
     */
    stallAfter?: (dataRequestIndex: number, request: {range: string | null, start: number}) => number | null,
    /** Answer every request with this status (for example 500 or 404). */
    forceStatus?: number,
    /** Paths answered with a 302 to another path of this server, or to an absolute URL (a download that ends up somewhere else). */
    redirects?: Record<string, string>,
    /** Serve https with this key and certificate (PEM) instead of http. */
    tls?: {key: string, cert: string},
    /** A lying server: the 1-byte probe's Content-Range announces this total, whatever the file's size. */
    probeTotalBytes?: number,
    /**
     * How data requests are answered: `ranged` (the default: 206 for a Range), `whole-chunked` (the
     * whole file as 200, chunked, no Content-Length, ranges ignored), `whole-with-length` (the whole
     * file as 200 with its Content-Length, ranges ignored). With `sizeless`, the probe too is
     * answered 200 chunked: the server never says how large the file is nor accepts ranges.
     */
    dataResponse?: "ranged" | "whole-chunked" | "whole-with-length" | "sizeless",
    /** Bytes per write. Defaults to `64 KiB`. */
    writeBytes?: number,
    /** Pause between writes, for transfers that must last long enough to be interrupted; per request when a function. Defaults to `0`. */
    writeDelayMs?: number | ((request: {range: string | null, start: number}) => number)
};

/** Downloader `fetcher` options that let downloads reach the test servers on 127.0.0.1 (the policy refuses loopback by default). */
export const loopbackFetcher = {allowLoopback: true} as const;

/**
 * A file server on 127.0.0.1 (ephemeral port) with HTTP Range support, that can drop
 * connections part-way and answer errors, and logs every request it served.
 */
export class RangeServer {
    public readonly requests: ServedRequest[] = [];
    public options: RangeServerOptions;
    private readonly _server: http.Server | https.Server;
    private _dataRequests = 0;

    private constructor(server: http.Server | https.Server, options: RangeServerOptions) {
        this._server = server;
        this.options = options;
    }

    public static async start(options: RangeServerOptions): Promise<RangeServer> {
        const server = options.tls != null ? https.createServer({key: options.tls.key, cert: options.tls.cert}) : http.createServer();
        const rangeServer = new RangeServer(server, options);
        server.on("request", (request, response) => void rangeServer._handle(request, response));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return rangeServer;
    }

    public get port() {
        return (this._server.address() as AddressInfo).port;
    }

    /** The URL of a file, on 127.0.0.1 or under another name for it (that the client resolves to 127.0.0.1 itself). */
    public url(name: string, host = "127.0.0.1") {
        return `${this.options.tls != null ? "https" : "http"}://${host}:${this.port}/${name}`;
    }

    /** Requests that carried a Range other than the 1-byte probe. */
    public dataRequests() {
        return this.requests.filter((request) => request.range != null && request.range !== "bytes=0-0");
    }

    public resetLog() {
        this.requests.length = 0;
        this._dataRequests = 0;
    }

    public async close() {
        this._server.closeAllConnections();
        await new Promise<void>((resolve) => this._server.close(() => resolve()));
    }

    private async _handle(request: http.IncomingMessage, response: http.ServerResponse) {
        const name = decodeURIComponent((request.url ?? "/").split("?")[0]!.slice(1));
        const range = request.headers.range ?? null;
        const log: ServedRequest = {
            method: request.method ?? "GET", path: name, host: request.headers.host ?? "", authorization: request.headers.authorization ?? null,
            range, status: 0, bytesSent: 0, dropped: false, stalled: false
        };
        this.requests.push(log);

        const redirect = this.options.redirects?.[name];
        if (redirect != null) {
            log.status = 302;
            response.writeHead(302, {location: /^[a-z]+:/i.test(redirect) ? redirect : `/${redirect}`});
            response.end();
            return;
        }

        const file = this.options.files[name];
        if (this.options.forceStatus != null || file == null) {
            log.status = this.options.forceStatus ?? 404;
            response.writeHead(log.status, {"content-type": "text/plain"});
            response.end(log.status === 404 ? "not found" : "server error");
            return;
        }

        let start = 0;
        let end = file.length - 1;
        const etag = `"${crypto.createHash("sha1").update(file).digest("hex")}"`;
        const isProbe = range === "bytes=0-0";
        const mode = this.options.dataResponse ?? "ranged";
        const ifRange = request.headers["if-range"];
        const match = range != null && (ifRange == null || ifRange === etag) ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
        if (mode === "sizeless" || (mode === "whole-chunked" && !isProbe)) {
            log.status = 200;
            response.writeHead(200, {"content-type": "application/octet-stream", etag}); // no Content-Length: chunked
        } else if (mode === "whole-with-length" && !isProbe) {
            log.status = 200;
            response.writeHead(200, {"content-length": String(file.length), "content-type": "application/octet-stream", etag});
        } else if (isProbe && this.options.probeTotalBytes != null) {
            log.status = 206;
            response.writeHead(206, {"accept-ranges": "bytes", "content-range": `bytes 0-0/${this.options.probeTotalBytes}`, "content-length": "1", etag});
            response.end(file.subarray(0, 1));
            log.bytesSent = 1;
            return;
        } else if (match != null) {
            start = Number(match[1]);
            end = match[2] !== "" ? Math.min(Number(match[2]), file.length - 1) : file.length - 1;
            if (start > end || start >= file.length) {
                log.status = 416;
                response.writeHead(416, {"content-range": `bytes */${file.length}`});
                response.end();
                return;
            }
            log.status = 206;
            response.writeHead(206, {
                "accept-ranges": "bytes",
                "content-range": `bytes ${start}-${end}/${file.length}`,
                "content-length": String(end - start + 1),
                "content-type": "application/octet-stream",
                etag
            });
        } else {
            log.status = 200;
            response.writeHead(200, {"accept-ranges": "bytes", "content-length": String(file.length), "content-type": "application/octet-stream", etag});
        }
        if (request.method === "HEAD") {
            response.end();
            return;
        }

        const isData = range != null && range !== "bytes=0-0";
        const dataIndex = isData ? this._dataRequests++ : -1;
        const dropAfter = isData ? this.options.dropAfter?.(dataIndex, {range, start}) ?? null : null;
        const stallAfter = !isProbe ? this.options.stallAfter?.(dataIndex, {range, start}) ?? null : null;
        const writeBytes = this.options.writeBytes ?? 64 * 1024;
        const delayOption = this.options.writeDelayMs ?? 0;
        const writeDelayMs = typeof delayOption === "function" ? delayOption({range, start}) : delayOption;
        let position = start;
        while (position <= end) {
            if (response.destroyed)
                return;
            let next = Math.min(end + 1, position + writeBytes);
            if (dropAfter != null && next - start >= dropAfter)
                next = start + dropAfter;
            if (stallAfter != null && next - start >= stallAfter)
                next = start + stallAfter;
            const chunk = file.subarray(position, next);
            const flushed = response.write(chunk);
            log.bytesSent += chunk.length;
            position = next;
            if (dropAfter != null && position - start >= dropAfter) {
                log.dropped = true;
                await new Promise((resolve) => setTimeout(resolve, 20)); // let the bytes leave before the cut
                response.socket?.destroy();
                return;
            }
            if (stallAfter != null && position - start >= stallAfter) {
                log.stalled = true;
                // Nothing more, ever: the connection stays open until the client (or close()) ends it.
                await new Promise<void>((resolve) => response.once("close", () => resolve()));
                return;
            }
            if (!flushed)
                await new Promise<void>((resolve) => {
                    const done = () => {
                        response.off("drain", done).off("close", done);
                        resolve();
                    };
                    response.on("drain", done).on("close", done);
                });
            if (writeDelayMs > 0)
                await new Promise((resolve) => setTimeout(resolve, writeDelayMs));
        }
        response.end();
    }
}

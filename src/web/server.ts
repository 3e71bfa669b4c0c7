import crypto from "node:crypto";
import http from "node:http";
import type {AddressInfo} from "node:net";
import {contentSecurityPolicy} from "../core/common/contentSecurityPolicy.js";
import type {RpcSocketHandler} from "./CoreWebSockets.js";
import {allowedOrigins, checkUpgradeRequest} from "./checkUpgradeRequest.js";
import {serveStaticFile} from "./serveStaticFile.js";

export type WebServerOptions = {
    /** Serves the core on each accepted upgrade: `CoreWebSockets` in this process, or web mode's core process (`WebCoreProcess`). */
    rpc: RpcSocketHandler,
    /** The built renderer (Vite's output folder). */
    rendererDir: string,
    /** `0` picks a free port. Defaults to `0`. */
    port?: number,
    /** Defaults to a random 32-byte token per launch. */
    token?: string
};

export type WebServer = {
    /** The page's address, token included: the one line to show the user. */
    url: string,
    port: number,
    token: string,
    close(): Promise<void>
};

export const rpcPath = "/rpc";

/**
 * Web mode: the built renderer over HTTP and the core's API over a WebSocket, on 127.0.0.1
 * only. An upgrade is accepted only with this launch's token, from our own Origin and Host; the
 * accepted socket goes to `rpc` as it is, before a frame is read.
 */
export async function startWebServer({rpc, rendererDir, port = 0, token = crypto.randomBytes(32).toString("base64url")}: WebServerOptions): Promise<WebServer> {
    let boundPort = 0;
    const server = http.createServer((request, response) => {
        const headers = securityHeaders(boundPort);
        const host = request.headers.host;
        if (host == null || !allowedOrigins(boundPort).includes(`http://${host}`)) {
            response.writeHead(403, headers).end();
            return;
        }
        serveStaticFile(request, response, rendererDir, headers);
    });

    server.on("upgrade", (request, socket, head) => {
        // Node's HTTP server stops watching a socket once it is handed over for an upgrade: a peer
        // that resets it (even while being refused) must not raise an unhandled 'error'.
        socket.on("error", () => socket.destroy());
        const pathname = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
        const verdict = pathname === rpcPath
            ? checkUpgradeRequest(request, {token, port: boundPort})
            : {ok: false as const, status: 403 as const, reason: "unknown path"};
        if (!verdict.ok) {
            const text = verdict.status === 401 ? "Unauthorized" : "Forbidden";
            socket.end(`HTTP/1.1 ${verdict.status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
            return;
        }
        rpc.accept({method: request.method ?? "GET", url: request.url ?? "/", headers: request.headers}, socket, head);
    });

    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => {
            server.off("error", reject);
            resolve();
        });
    });
    boundPort = (server.address() as AddressInfo).port;

    return {
        url: `http://127.0.0.1:${boundPort}/?token=${token}`,
        port: boundPort,
        token,
        async close() {
            rpc.dropConnections();
            server.closeAllConnections();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        }
    };
}

function securityHeaders(port: number): Record<string, string> {
    return {
        // The page connects to this server's WebSocket only.
        "Content-Security-Policy": contentSecurityPolicy({connectSrc: [`ws://127.0.0.1:${port}`, `ws://localhost:${port}`]}),
        "X-Content-Type-Options": "nosniff",
        // The page's address carries the token: never send it on as a referrer.
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin"
    };
}

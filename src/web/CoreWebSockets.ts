import type {IncomingHttpHeaders, IncomingMessage} from "node:http";
import type {Duplex} from "node:stream";
import {WebSocketServer, type WebSocket} from "ws";
import {maxRpcMessageBytes} from "../core/common/rpc/maxRpcMessageBytes.js";
import type {CoreService} from "../core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../core/node/rpc/serveCoreOverChannel.js";
import {webSocketChannel} from "./webSocketChannel.js";

/** What the WebSocket handshake needs of an upgrade request: plain data, so that it can cross to another process. */
export type UpgradeRequestHead = {method: string, url: string, headers: IncomingHttpHeaders};

/** Takes the upgrades the web server accepted (token, Host and Origin checked) and serves the core on them, here or in another process. */
export type RpcSocketHandler = {
    accept(request: UpgradeRequestHead, socket: Duplex, head: Buffer): void,
    /** Ends every connection at once (the web server is closing); whoever made the handler disposes it. */
    dropConnections(): void
};

/**
 * The core's WebSockets in the process that holds the core: completes each handshake and serves
 * the core's API on the socket. Every frame is read here, and only here.
 */
export class CoreWebSockets implements RpcSocketHandler {
    // The largest valid call passes whole; a larger message closes its socket with 1009.
    private readonly _server = new WebSocketServer({noServer: true, maxPayload: maxRpcMessageBytes});
    private readonly _service: CoreService;

    public constructor(service: CoreService) {
        this._service = service;
    }

    public accept(request: UpgradeRequestHead, socket: Duplex, head: Buffer) {
        // `ws` reads only the method, the URL and the headers of the request.
        this._server.handleUpgrade(request as IncomingMessage, socket, head, (webSocket) => {
            serveCoreOverChannel(this._service, webSocketChannel(webSocket));
        });
    }

    /**
     * Closes every socket with `code`, after what was already sent to it (an answer, the events of a
     * lock), and resolves once all have closed; a peer that does not answer within `graceMs` is cut.
     */
    public async closeGracefully(code: number, reason: string, graceMs: number) {
        const closing = [...this._server.clients].map((client) => closed(client, graceMs));
        for (const client of this._server.clients)
            client.close(code, reason);
        await Promise.all(closing);
    }

    public dropConnections() {
        for (const client of this._server.clients)
            client.terminate();
    }

    /** Every socket cut and the WebSocket server closed: no handshake completes any more. */
    public dispose() {
        this.dropConnections();
        this._server.close();
    }

    public [Symbol.dispose]() {
        this.dispose();
    }
}

function closed(client: WebSocket, graceMs: number) {
    return new Promise<void>((resolve) => {
        if (client.readyState === client.CLOSED) {
            resolve();
            return;
        }
        const cut = setTimeout(() => client.terminate(), graceMs);
        client.once("close", () => {
            clearTimeout(cut);
            resolve();
        });
    });
}

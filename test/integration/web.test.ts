import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {WebSocket} from "ws";
import {connectCoreClient} from "../../src/core/common/rpc/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {webSocketChannel} from "../../src/web/webSocketChannel.js";
import {CoreWebSockets} from "../../src/web/CoreWebSockets.js";
import {startWebServer, type WebServer} from "../../src/web/server.js";
import {tempDir} from "../helpers/tempCore.js";

let core: Core;
let service: CoreService;
let server: WebServer;
let rendererDir: string;

/** Tries a WebSocket upgrade; resolves with the HTTP status of a refusal, or the open socket. */
function tryUpgrade(query: string, headers: Record<string, string>): Promise<{status: number, socket?: WebSocket}> {
    return new Promise((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${server.port}/rpc${query}`, {headers});
        socket.once("open", () => resolve({status: 101, socket}));
        socket.once("unexpected-response", (_request, response) => {
            resolve({status: response.statusCode ?? 0});
            socket.terminate();
        });
        socket.once("error", (error) => {
            if (!/Unexpected server response/.test(error.message))
                reject(error);
        });
    });
}

function get(urlPath: string, headers: Record<string, string> = {}): Promise<{status: number, body: string, headers: http.IncomingHttpHeaders}> {
    return new Promise((resolve, reject) => {
        http.get({host: "127.0.0.1", port: server.port, path: urlPath, headers}, (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => body += chunk);
            response.on("end", () => resolve({status: response.statusCode ?? 0, body, headers: response.headers}));
        }).on("error", reject);
    });
}

const ownOrigin = () => ({origin: `http://127.0.0.1:${server.port}`});

beforeAll(async () => {
    const dir = tempDir("web");
    rendererDir = path.join(dir, "renderer");
    fs.mkdirSync(rendererDir);
    fs.writeFileSync(path.join(rendererDir, "index.html"), "<!doctype html><title>test renderer</title>");
    fs.writeFileSync(path.join(dir, "secret.txt"), "outside the renderer");
    fs.writeFileSync(path.join(rendererDir, "app.js"), "console.log('inside');");
    // Links inside the renderer folder: to a file outside, to the folder above, to a file inside.
    fs.symlinkSync(path.join(dir, "secret.txt"), path.join(rendererDir, "leak.txt"));
    fs.symlinkSync(dir, path.join(rendererDir, "up"));
    fs.symlinkSync(path.join(rendererDir, "app.js"), path.join(rendererDir, "alias.js"));
    fs.mkdirSync(path.join(rendererDir, "folder"));
    core = Core.create(await loadLlama(), {database: path.join(dir, "web.db")});
    service = createCoreService(core);
    server = await startWebServer({rpc: new CoreWebSockets(service), rendererDir});
});

afterAll(async () => {
    await server.close();
    service.dispose();
    await core.dispose();
});

describe("web mode's WebSocket door", () => {
    it("listens on 127.0.0.1 only and prints a URL with a fresh random token", async () => {
        expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
        expect(server.token.length).toBeGreaterThanOrEqual(40);
        const other = await startWebServer({rpc: new CoreWebSockets(service), rendererDir});
        try {
            expect(other.token).not.toBe(server.token);
        } finally {
            await other.close();
        }
    });

    it("refuses an upgrade without a token (401)", async () => {
        expect((await tryUpgrade("", ownOrigin())).status).toBe(401);
        expect((await tryUpgrade("?token=", ownOrigin())).status).toBe(401);
    });

    it("refuses an upgrade with a wrong token (401)", async () => {
        expect((await tryUpgrade("?token=wrong", ownOrigin())).status).toBe(401);
        expect((await tryUpgrade(`?token=${server.token}x`, ownOrigin())).status).toBe(401);
    });

    it("refuses a foreign or missing Origin even with the right token (403)", async () => {
        const query = `?token=${server.token}`;
        expect((await tryUpgrade(query, {origin: "http://evil.example"})).status).toBe(403);
        expect((await tryUpgrade(query, {origin: `http://127.0.0.1:${server.port + 1}`})).status).toBe(403);
        expect((await tryUpgrade(query, {origin: "null"})).status).toBe(403);
        expect((await tryUpgrade(query, {})).status).toBe(403);
    });

    it("refuses a foreign Host (DNS rebinding) and unknown paths (403)", async () => {
        expect((await tryUpgrade(`?token=${server.token}`, {...ownOrigin(), host: `evil.example:${server.port}`})).status).toBe(403);
        const status = await new Promise<number>((resolve) => {
            const socket = new WebSocket(`ws://127.0.0.1:${server.port}/elsewhere?token=${server.token}`, {headers: ownOrigin()});
            socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
            socket.once("open", () => resolve(101));
            socket.once("error", () => undefined);
        });
        expect(status).toBe(403);
    });

    it("accepts the right token from our own origin and carries the API", async () => {
        for (const origin of [`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`]) {
            const {status, socket} = await tryUpgrade(`?token=${server.token}`, {origin});
            expect(status).toBe(101);
            const client = connectCoreClient(webSocketChannel(socket!));
            const created = await client.call("conversations.create", {title: `via ${origin}`});
            const listed = await client.call("conversations.list", {});
            expect(listed.map((conversation) => conversation.id)).toContain(created.id);
            const refused = await client.call("conversations.create", {policy: "anywhere" as never}).catch((error: unknown) => error);
            expect((refused as {code: string}).code).toBe("INVALID_INPUT");
            client.close();
            socket!.close();
        }
    });
});

describe("web mode's page server", () => {
    it("serves the renderer with a strict CSP and no referrer", async () => {
        const page = await get("/");
        expect(page.status).toBe(200);
        expect(page.body).toContain("test renderer");
        expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
        expect(page.headers["content-security-policy"]).toContain(`connect-src ws://127.0.0.1:${server.port}`);
        expect(page.headers["referrer-policy"]).toBe("no-referrer");
    });

    it("follows no symlink out of the renderer folder: a link to a file or folder outside gets the app's page, never the file", async () => {
        for (const urlPath of ["/leak.txt", "/up/secret.txt", "/up/web.db", "/%6ceak.txt"]) {
            const response = await get(urlPath);
            expect(response.body, urlPath).not.toContain("outside the renderer");
            expect(response.body, urlPath).toContain("test renderer");
            expect(response.headers["content-type"], urlPath).toContain("text/html");
        }
        // A link whose target stays inside is a regular file inside: served.
        expect((await get("/alias.js")).body).toContain("inside");
        expect((await get("/folder")).body).toContain("test renderer");
    });

    it("never serves files outside the renderer folder, nor to a foreign Host", async () => {
        const traversal = await get("/..%2fsecret.txt");
        expect(traversal.body).not.toContain("outside the renderer");
        expect((await get("/", {host: "evil.example"})).status).toBe(403);
    });
});

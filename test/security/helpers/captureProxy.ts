import http from "node:http";
import type {AddressInfo, Socket} from "node:net";

export type CapturedExchange = {method: string, path: string, authorization: string | null, requestBody: string, status: number, responseBody: string};

export type CaptureProxy = {
    /** Base URL with `/v1`, to use as the cloud endpoint. */
    url: string,
    exchanges: CapturedExchange[],
    close(): Promise<void>
};

/**
 * A small HTTP proxy on 127.0.0.1 in front of an OpenAI-compatible server: it forwards every
 * request unchanged and keeps a copy of what went each way (request bodies hold the canaries
 * the client planted; the Authorization header holds the API key).
 *
 * Hostile modes forward nothing, and answer as a careless or malicious server might:
 * - `"401"`: HTTP 401 with an error message that echoes the Authorization header and the request
 *   body. A client that copied server error messages into its logs would leak both.
 * - `"malformed"`: HTTP 200 with a stream whose events are broken JSON holding the request body
 *   (its canaries and text). A client library that logs unparseable events would print them.
 */
export async function startCaptureProxy({target = null, hostile = null}: {target?: string | null, hostile?: "401" | "malformed" | null}): Promise<CaptureProxy> {
    const exchanges: CapturedExchange[] = [];
    const upstream = target == null ? null : new URL(target);
    const server = http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
            const requestBody = Buffer.concat(chunks).toString("utf8");
            const exchange: CapturedExchange = {
                method: request.method ?? "GET", path: request.url ?? "/", authorization: request.headers.authorization ?? null,
                requestBody, status: 0, responseBody: ""
            };
            exchanges.push(exchange);
            if (hostile === "malformed" && exchange.path.includes("/chat/completions")) {
                const body = `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${requestBody}\n\n`;
                exchange.status = 200;
                exchange.responseBody = body;
                response.writeHead(200, {"content-type": "text/event-stream"});
                response.end(body);
                return;
            }
            if (hostile != null || upstream == null) {
                const body = JSON.stringify({error: {
                    message: `Incorrect API key provided: ${exchange.authorization ?? "(none)"}. Your request was: ${requestBody}`,
                    type: "invalid_request_error", param: null, code: "invalid_api_key"
                }});
                exchange.status = 401;
                exchange.responseBody = body;
                response.writeHead(401, {"content-type": "application/json", "content-length": String(Buffer.byteLength(body))});
                response.end(body);
                return;
            }
            const forwarded = http.request({
                host: upstream.hostname, port: upstream.port, method: request.method, path: request.url,
                headers: {...request.headers, host: upstream.host}
            }, (answer) => {
                exchange.status = answer.statusCode ?? 0;
                response.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.on("data", (chunk: Buffer) => {
                    exchange.responseBody += chunk.toString("utf8");
                    response.write(chunk);
                });
                answer.on("end", () => response.end());
                answer.on("error", () => response.destroy());
                answer.on("aborted", () => response.destroy());
            });
            forwarded.on("error", () => response.destroy());
            forwarded.end(requestBody);
        });
    });
    const sockets = new Set<Socket>();
    server.on("connection", (socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const {port} = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}/v1`,
        exchanges,
        close: () => new Promise<void>((resolve) => {
            for (const socket of sockets)
                socket.destroy();
            server.close(() => resolve());
        })
    };
}

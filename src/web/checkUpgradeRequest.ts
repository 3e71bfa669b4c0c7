import crypto from "node:crypto";
import type {IncomingMessage} from "node:http";

export type UpgradeVerdict = {ok: true} | {ok: false, status: 401 | 403, reason: string};

/** The origins (and Host values) a page served by this server can have: loopback on our port only. */
export function allowedOrigins(port: number) {
    return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

/**
 * Decides whether a WebSocket upgrade may reach the core: the Host must be our loopback
 * address (no DNS rebinding), the Origin one of our pages (no other site), and the query
 * must carry this launch's token.
 */
export function checkUpgradeRequest(request: Pick<IncomingMessage, "headers" | "url">, expected: {token: string, port: number}): UpgradeVerdict {
    const origins = allowedOrigins(expected.port);
    const host = request.headers.host;
    if (host == null || !origins.includes(`http://${host}`))
        return {ok: false, status: 403, reason: "foreign Host"};

    const origin = request.headers.origin;
    if (origin == null || !origins.includes(origin))
        return {ok: false, status: 403, reason: "foreign or missing Origin"};

    const token = new URL(request.url ?? "/", "http://127.0.0.1").searchParams.get("token");
    if (token == null || token === "")
        return {ok: false, status: 401, reason: "no token"};
    if (!tokensMatch(token, expected.token))
        return {ok: false, status: 401, reason: "wrong token"};

    return {ok: true};
}

function tokensMatch(given: string, expected: string) {
    const a = crypto.createHash("sha256").update(given).digest();
    const b = crypto.createHash("sha256").update(expected).digest();
    return crypto.timingSafeEqual(a, b);
}

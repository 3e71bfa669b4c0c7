import type {AddressInfo} from "node:net";
import {serve, type ServerType} from "@hono/node-server";
import type {Core} from "../core/node/Core.js";
import {CleanroomError} from "../core/common/errors.js";
import {ApiKeyRing} from "./ApiKeyRing.js";
import {createApiApp, type ApiAppOptions, type ApiRequestReport} from "./createApiApp.js";
import {isLoopbackHost, loopbackHostHeaders} from "./isLoopbackHost.js";

export type ApiServerOptions = {
    core: Core,
    /** The name clients ask for the model under; a function for a server whose model may change (the app's), null while none is loaded. */
    modelName: string | (() => string | null),
    /** The address to listen on. Defaults to `127.0.0.1`. */
    host?: string,
    /** `0` picks a free port. Defaults to `1234`. */
    port?: number,
    /** API keys, each a tenant. Defaults to none: then only loopback addresses may be listened on. */
    apiKeys?: string[],
    /** The keys as a ring (the app's stored keys) instead of `apiKeys`. */
    keys?: ApiKeyRing,
    /** Requests served at once. Defaults to `4`. */
    parallel?: number,
    /** How long a `cache_salt` reuse cache is kept with no request using it, in ms. Defaults to 5 minutes. */
    cacheIdleMs?: number,
    /** How the user picks another port, said when the port is taken. Defaults to `choose another with --port (0 picks a free one)`. */
    otherPortAdvice?: string,
    onRequestEnd?: (report: ApiRequestReport) => void,
    onEmbedded?: ApiAppOptions["onEmbedded"],
    onClientLeft?: (requestId: string, tenant: string) => void
};

export type ApiServer = {
    /** `http://<host>:<port>/v1`, the base URL OpenAI clients take. */
    baseUrl: string,
    /** Whether a request needs a key: false only while no key has guarded it and it listens on loopback (then the `Host` header is checked). */
    keyRequired(): boolean,
    port: number,
    /** Every endpoint it serves, `METHOD /path`, read from its route table. */
    endpoints: string[],
    /** Stops taking requests, stops those in flight (each still scrubbed by the core), waits for them to end, then scrubs every `cache_salt` cache. */
    close(): Promise<void>
};

export const defaultApiPort = 1234;
export const defaultApiHost = "127.0.0.1";
export const defaultApiParallel = 4;
export const defaultCacheIdleMs = 5 * 60 * 1000;

/** Refuses an address other machines can reach when no key guards it. */
export function checkListenAddress(host: string, keyCount: number) {
    if (keyCount === 0 && !isLoopbackHost(host))
        throw new CleanroomError("INVALID_INPUT",
            `--host ${host} would let other machines reach the model with no key: give at least one --api-key (or make one in the app: Settings → Local API server), or listen on 127.0.0.1.`, {option: "--host", value: host});
}

/** Starts the local OpenAI-compatible server (`cleanroom serve`) on a core with its model loaded. */
export async function startApiServer({core, modelName, host = defaultApiHost, port = defaultApiPort, apiKeys = [], keys = new ApiKeyRing(apiKeys),
    parallel = defaultApiParallel, cacheIdleMs = defaultCacheIdleMs, otherPortAdvice = "choose another with --port (0 picks a free one)", onRequestEnd, onEmbedded, onClientLeft}: ApiServerOptions): Promise<ApiServer> {
    checkListenAddress(host, keys.size);
    // Once a key guards it (or other machines reach it), revoking every stored key does not open it: it refuses every request until restarted.
    let keyed = !isLoopbackHost(host);
    const keyRequired = () => keyed ||= keys.size > 0;
    const shutdown = new AbortController();
    let listeningPort = port;
    const {app, endpoints, settled} = createApiApp({
        core, modelName: typeof modelName === "string" ? () => modelName : modelName, keys, parallel, cacheIdleMs, shutdownSignal: shutdown.signal, onRequestEnd, onEmbedded, onClientLeft,
        keyRequired,
        allowedHosts: () => loopbackHostHeaders(listeningPort)
    });
    const server = await new Promise<ServerType>((resolve, reject) => {
        const started = serve({
            fetch: app.fetch,
            hostname: host,
            port
        }, () => resolve(started));
        started.once("error", (error: NodeJS.ErrnoException) => reject(error.code === "EADDRINUSE"
            ? new CleanroomError("PORT_IN_USE", `Port ${port} on ${host} is already in use by another program: ${otherPortAdvice}.`, {host, port})
            : new CleanroomError("INVALID_INPUT", `Cannot listen on ${host}:${port}: ${error.message}`, {option: "--port", value: port})));
    });
    listeningPort = (server.address() as AddressInfo).port;
    const shownHost = host.includes(":") ? `[${host}]` : host;

    return {
        baseUrl: `http://${shownHost}:${listeningPort}/v1`,
        port: listeningPort,
        endpoints,
        keyRequired,
        close: async () => {
            const closed = new Promise<void>((resolve) => server.close(() => resolve()));
            shutdown.abort();
            await settled();
            await core.endApiCaches();
            if ("closeAllConnections" in server)
                server.closeAllConnections();
            await closed;
        }
    };
}

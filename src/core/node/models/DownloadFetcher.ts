import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type {LookupFunction} from "node:net";
import net from "node:net";
import {Readable} from "node:stream";
import tls from "node:tls";
import {classifyAddress, type AddressClass} from "./classifyAddress.js";
import {DownloadUrlRefusedError} from "./DownloadUrlRefusedError.js";

export type ResolvedAddress = {address: string, family: 4 | 6};

export type DownloadFetcherOptions = {
    /**
     * Also fetch from this machine (127.0.0.0/8, ::1, `localhost`), over http:// as well as
     * https://: for tests and a mirror on this machine. Never from any other non-public address,
     * and http:// never to anything but loopback. Defaults to `false`.
     */
    allowLoopback?: boolean,
    /** Redirects followed (each one checked like the URL asked for) before the download is refused. Defaults to `5`. */
    maxRedirects?: number,
    /** Resolves a host name to every address it has. Defaults to `dns.lookup` (`all`, `verbatim`): what the OS would connect to. */
    resolve?: (hostname: string) => Promise<ResolvedAddress[]>,
    /** PEM certificates trusted in addition to the system's (tests: a local https server). Defaults to none. */
    extraCertificates?: string[],
    /**
     * Sent as `Authorization: Bearer …` to https://huggingface.co only, never to another host,
     * also not after a redirect to one (Hugging Face's file CDN gets the signed URL, not the token).
     * Defaults to `process.env.HF_TOKEN` when set and not empty, else none.
     */
    huggingFaceToken?: string | null
};

export type DownloadFetchInit = {
    headers?: Record<string, string>,
    signal?: AbortSignal
};

export const defaultMaxRedirects = 5;
const huggingFaceHost = "huggingface.co";
const redirectStatuses: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const nullBodyStatuses: ReadonlySet<number> = new Set([204, 205, 304]);
/** Headers that carry the caller's credentials: never sent to another origin than the URL asked for. */
const credentialHeaders = ["authorization", "cookie", "proxy-authorization"];

/**
 * Fetches download URLs under a policy, because a URL may come from a web page or a
 * compromised renderer: https only; every host resolved and every address it has checked
 * (no loopback, private, CGNAT, link-local, unique-local, unspecified, multicast or reserved
 * address, nor an IPv4-mapped or embedded form of one); redirects followed by hand, each
 * checked the same way, at most `maxRedirects`. The connection goes to the address that was
 * checked (a pinned lookup), so a DNS answer that changes between the check and the connect
 * (rebinding) cannot send it elsewhere.
 */
export class DownloadFetcher {
    public readonly allowLoopback: boolean;
    public readonly maxRedirects: number;
    private readonly _resolve: (hostname: string) => Promise<ResolvedAddress[]>;
    private readonly _ca: string[] | undefined;
    private readonly _huggingFaceToken: string | null;

    public constructor({
        allowLoopback = false, maxRedirects = defaultMaxRedirects, resolve = resolveWithOs, extraCertificates,
        huggingFaceToken = process.env.HF_TOKEN
    }: DownloadFetcherOptions = {}) {
        this.allowLoopback = allowLoopback;
        this.maxRedirects = maxRedirects;
        this._resolve = resolve;
        this._ca = extraCertificates != null && extraCertificates.length > 0 ? [...tls.rootCertificates, ...extraCertificates] : undefined;
        this._huggingFaceToken = huggingFaceToken != null && huggingFaceToken !== "" ? huggingFaceToken : null;
    }

    /**
     * What can be refused without a DNS lookup: the scheme, an address literal, `localhost`.
     * Throws `DownloadUrlRefusedError`; a URL that passes is checked again, resolved, when fetched.
     */
    public checkUrl(url: string): void {
        const parsed = this._checkScheme(url, url, 0);
        const host = bareHost(parsed);
        const literalClass = net.isIP(host) !== 0 ? classifyAddress(host) : isLocalhostName(host) ? "loopback" : null;
        if (literalClass != null)
            this._checkAddressClasses(url, parsed, 0, [literalClass]);
    }

    /** GET `url` (redirects followed and checked): the final response. Network failures reject as `fetch` does (a TypeError with the cause). */
    public async fetch(url: string, {headers = {}, signal}: DownloadFetchInit = {}): Promise<Response> {
        const origin = URL.canParse(url) ? new URL(url).origin : null;
        let current = url;
        for (let hop = 0; ; hop++) {
            const target = await this._checkTarget(url, current, hop);
            const hopHeaders = this._headersFor(target.url, headers, origin);
            const response = await requestPinned(target.url, target.addresses, hopHeaders, signal, this._ca);
            if (!redirectStatuses.has(response.status))
                return response;

            await response.body?.cancel().catch(() => undefined);
            const location = response.headers.get("location");
            if (location == null || !URL.canParse(location, target.url.href))
                throw new DownloadUrlRefusedError(url, target.url.host, hop, {reason: "bad-redirect"});
            if (hop + 1 > this.maxRedirects)
                throw new DownloadUrlRefusedError(url, target.url.host, hop, {reason: "too-many-redirects", maxRedirects: this.maxRedirects});
            current = new URL(location, target.url.href).href;
        }
    }

    private async _checkTarget(askedUrl: string, url: string, hop: number): Promise<{url: URL, addresses: ResolvedAddress[]}> {
        const parsed = this._checkScheme(askedUrl, url, hop);
        const host = bareHost(parsed);
        const family = net.isIP(host);
        const addresses: ResolvedAddress[] = family !== 0
            ? [{address: host, family: family as 4 | 6}]
            : await this._resolve(host).catch((error: unknown) => {
                throw Object.assign(new TypeError("fetch failed"), {cause: error});
            });
        if (addresses.length === 0)
            throw Object.assign(new TypeError("fetch failed"), {cause: Object.assign(new Error(`${host} has no address`), {code: "ENOTFOUND"})});
        const classes = addresses.map((resolved) => classifyAddress(resolved.address));
        if (family === 0 && isLocalhostName(host))
            classes.push("loopback");
        this._checkAddressClasses(askedUrl, parsed, hop, classes);
        return {url: parsed, addresses};
    }

    private _checkScheme(askedUrl: string, url: string, hop: number): URL {
        if (!URL.canParse(url))
            throw new DownloadUrlRefusedError(askedUrl, "", hop, {reason: "malformed"});
        const parsed = new URL(url);
        if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && this.allowLoopback))
            throw new DownloadUrlRefusedError(askedUrl, parsed.host, hop, {reason: "scheme", scheme: parsed.protocol});
        return parsed;
    }

    /** Every address must be public, or loopback when allowed; http:// only to loopback. */
    private _checkAddressClasses(askedUrl: string, url: URL, hop: number, classes: AddressClass[]) {
        const refused = classes.find((kind) => kind !== "public" && !(kind === "loopback" && this.allowLoopback));
        if (refused != null)
            throw new DownloadUrlRefusedError(askedUrl, url.host, hop, {reason: "address", addressClass: refused});
        if (url.protocol === "http:" && classes.some((kind) => kind !== "loopback"))
            throw new DownloadUrlRefusedError(askedUrl, url.host, hop, {reason: "scheme", scheme: url.protocol});
    }

    private _headersFor(url: URL, headers: Record<string, string>, origin: string | null): Record<string, string> {
        const sameOrigin = url.origin === origin;
        const hopHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(headers))
            if (sameOrigin || !credentialHeaders.includes(name.toLowerCase()))
                hopHeaders[name] = value;
        const hasAuthorization = Object.keys(hopHeaders).some((name) => name.toLowerCase() === "authorization");
        if (this._huggingFaceToken != null && url.protocol === "https:" && url.hostname === huggingFaceHost && !hasAuthorization)
            hopHeaders.authorization = `Bearer ${this._huggingFaceToken}`;
        return hopHeaders;
    }
}

/** One request, connected to one of the checked addresses whatever DNS says now. */
function requestPinned(url: URL, addresses: ResolvedAddress[], headers: Record<string, string>, signal: AbortSignal | undefined,
    ca: string[] | undefined): Promise<Response> {
    const lookup: LookupFunction = (_hostname, options, callback) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((resolved) => resolved.family === options.family) : addresses;
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all === true)
            (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, usable);
        else
            callback(null, usable[0]!.address, usable[0]!.family);
    };
    const client = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
        const request = client.request({
            protocol: url.protocol,
            hostname: bareHost(url),
            port: url.port === "" ? undefined : Number(url.port),
            path: `${url.pathname}${url.search}`,
            method: "GET",
            headers,
            agent: false,
            lookup,
            signal,
            ...(ca != null ? {ca} : {})
        }, (message) => {
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(message.headers))
                if (value != null)
                    responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
            const status = message.statusCode ?? 0;
            if (status < 200 || status > 599) {
                message.destroy();
                reject(Object.assign(new TypeError("fetch failed"), {cause: new Error(`unexpected HTTP status ${status}`)}));
                return;
            }
            const body = nullBodyStatuses.has(status) ? null : Readable.toWeb(message) as ReadableStream<Uint8Array>;
            if (body == null)
                message.resume();
            resolve(new Response(body, {status, statusText: message.statusMessage ?? "", headers: responseHeaders}));
        });
        request.once("error", (error) => reject(Object.assign(new TypeError("fetch failed"), {cause: error})));
        request.end();
    });
}

async function resolveWithOs(hostname: string): Promise<ResolvedAddress[]> {
    const found = await dns.promises.lookup(hostname, {all: true, verbatim: true});
    return found.map((entry) => ({address: entry.address, family: entry.family === 6 ? 6 : 4}));
}

/** The host without IPv6 brackets. */
function bareHost(url: URL) {
    return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** `localhost` and its subdomains always mean this machine (RFC 6761), whatever a resolver says. */
function isLocalhostName(host: string) {
    const name = host.toLowerCase().replace(/\.$/, "");
    return name === "localhost" || name.endsWith(".localhost");
}

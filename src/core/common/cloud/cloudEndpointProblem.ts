/**
 * Why `endpoint` may not be the cloud endpoint, or `null` when it may: `https://` anywhere;
 * plain `http://` only to this machine (127.0.0.0/8, ::1, localhost), since the API key and
 * every message would otherwise cross the network unencrypted.
 */
export function cloudEndpointProblem(endpoint: string): string | null {
    let url: URL;
    try {
        url = new URL(endpoint);
    } catch {
        return "the cloud endpoint is not a URL";
    }
    if (url.protocol === "https:")
        return null;
    if (url.protocol !== "http:")
        return `the cloud endpoint must be an https:// URL, not ${url.protocol}`;
    if (isLoopbackHost(url.hostname))
        return null;
    return `plain http:// to ${url.host} would send the API key and every message unencrypted: ` +
        "use https://, or http:// only to this machine (127.0.0.1, ::1, localhost)";
}

/** The WHATWG URL parser writes every IPv4 form (`127.1`, `0x7f.0.0.1`) as dotted decimal, and IPv6 in brackets. */
function isLoopbackHost(hostname: string) {
    return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

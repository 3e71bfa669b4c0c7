import net from "node:net";

/** Whether a listening address is this machine's loopback only: 127.0.0.0/8, ::1 or `localhost`. */
export function isLoopbackHost(host: string) {
    if (host === "localhost")
        return true;
    if (net.isIPv4(host))
        return host.startsWith("127.");
    return net.isIPv6(host) && (host === "::1" || host === "0:0:0:0:0:0:0:1");
}

/** The `Host` header values a client on this machine sends to a loopback server on `port` (a rebinding page sends its own domain). */
export function loopbackHostHeaders(port: number) {
    return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

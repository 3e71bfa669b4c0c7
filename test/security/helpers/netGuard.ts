/**
 * Preload (`node --import <this file>`) that records every attempt to reach the network from
 * JavaScript: TCP/IPC connects (net, tls, http, https, http2 all end in net.Socket#connect),
 * UDP sockets, DNS lookups, fetch and WebSocket. Each attempt is appended as a JSON line to
 * $CLEANROOM_NET_GUARD_LOG; with $CLEANROOM_NET_GUARD_MODE=block (the default) it also throws.
 * `record` lets the attempt through, so that native observers can be shown to see it too.
 */
import dgram from "node:dgram";
import dns from "node:dns";
import fs from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import module from "node:module";
import net from "node:net";
import tls from "node:tls";

export type NetAttempt = {api: string, target: string, pid: number};

const logFile = process.env.CLEANROOM_NET_GUARD_LOG;
const block = (process.env.CLEANROOM_NET_GUARD_MODE ?? "block") === "block";

function attempt(api: string, args: unknown[]) {
    const line: NetAttempt = {api, target: describeTarget(args), pid: process.pid};
    if (logFile != null)
        fs.appendFileSync(logFile, JSON.stringify(line) + "\n");
    if (block)
        throw new Error(`network guard: ${api} to ${line.target} blocked`);
}

function describeTarget(args: unknown[]): string {
    try {
        return JSON.stringify(args, (_key, value: unknown) => {
            if (typeof value === "function")
                return "[function]";
            if (value instanceof URL)
                return value.href;
            if (typeof value === "object" && value != null && !Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype)
                return `[${value.constructor?.name ?? "object"}]`;
            return value;
        }).slice(0, 300);
    } catch {
        return "(unprintable)";
    }
}

type AnyFunction = (...args: unknown[]) => unknown;

function wrap<T extends object>(owner: T, name: keyof T & string, api: string) {
    const original = owner[name] as unknown as AnyFunction | undefined;
    if (typeof original !== "function")
        return;
    const wrapped = function (this: unknown, ...args: unknown[]) {
        attempt(api, args);
        return original.apply(this, args);
    };
    Object.defineProperty(owner, name, {value: wrapped, writable: true, configurable: true});
}

wrap(net.Socket.prototype, "connect", "net.Socket.connect");
wrap(tls, "connect", "tls.connect");
wrap(http, "request", "http.request");
wrap(http, "get", "http.get");
wrap(https, "request", "https.request");
wrap(https, "get", "https.get");
wrap(http2, "connect", "http2.connect");
wrap(dgram, "createSocket", "dgram.createSocket");
wrap(dgram.Socket.prototype, "send", "dgram.Socket.send");
wrap(dgram.Socket.prototype, "connect", "dgram.Socket.connect");
for (const name of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny", "lookupService"] as const) {
    wrap(dns, name, `dns.${name}`);
    wrap(dns.promises, name, `dns.promises.${name}`);
}
wrap(dns.Resolver.prototype, "resolve", "dns.Resolver.resolve");
wrap(globalThis, "fetch", "fetch");
if ("WebSocket" in globalThis)
    wrap(globalThis as unknown as {WebSocket: AnyFunction}, "WebSocket", "WebSocket");
// `import {request} from "node:http"` reads the ESM view of the builtins: bring it in line with the patches.
module.syncBuiltinESMExports();

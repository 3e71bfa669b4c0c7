/**
 * The renderer's Content-Security-Policy, the one definition for every place that serves it:
 * the desktop app's app:// protocol and window headers, web mode's HTTP server, and the meta tag
 * of renderer/index.html (checked against this by test/unit/contentSecurityPolicy.test.ts).
 * Scripts, styles, images and fonts from the app only; no inline code, no plugins, no framing.
 */
const directives: Array<[string, string]> = [
    ["default-src", "'none'"],
    ["script-src", "'self'"],
    ["style-src", "'self'"],
    ["img-src", "'self' data:"],
    ["font-src", "'self'"],
    ["base-uri", "'none'"],
    ["form-action", "'none'"],
    ["object-src", "'none'"],
    ["frame-ancestors", "'none'"]
];

export type ContentSecurityPolicyOptions = {
    /** Where the page may connect: `'self'` in the desktop app, the core's WebSocket address in web mode. */
    connectSrc: string[],
    /** For a `<meta>` tag, which cannot carry `frame-ancestors` (browsers ignore it there). Defaults to `false`. */
    meta?: boolean
};

export function contentSecurityPolicy({connectSrc, meta = false}: ContentSecurityPolicyOptions): string {
    const all: Array<[string, string]> = [...directives.slice(0, 5), ["connect-src", connectSrc.join(" ")], ...directives.slice(5)];
    return all.filter(([name]) => !(meta && name === "frame-ancestors")).map(([name, value]) => `${name} ${value}`).join("; ");
}

/** What the meta tag of renderer/index.html says: the app itself, and a core on this machine's loopback. */
export const rendererMetaPolicy = contentSecurityPolicy({connectSrc: ["'self'", "ws://127.0.0.1:*", "ws://localhost:*"], meta: true});

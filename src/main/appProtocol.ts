import fs from "node:fs/promises";
import path from "node:path";
import {protocol} from "electron";
import {appHost, appScheme, contentSecurityPolicy} from "./securityPolicy.js";
import {rendererContentTypes} from "../core/common/rendererContentTypes.js";


/** Must run before `app` is ready: the app scheme is standard and secure, so `'self'` in the CSP means it. */
export function registerAppScheme() {
    protocol.registerSchemesAsPrivileged([{scheme: appScheme, privileges: {standard: true, secure: true, supportFetchAPI: false}}]);
}

/** Serves the built renderer on app://cleanroom/ with the strict CSP header; nothing outside its folder. */
export function serveRenderer(rendererDir: string) {
    const root = path.resolve(rendererDir);
    protocol.handle(appScheme, async (request) => {
        const url = new URL(request.url);
        if (url.host !== appHost)
            return new Response(null, {status: 403});

        const file = path.resolve(root, "." + decodeURIComponent(url.pathname === "/" ? "/index.html" : url.pathname));
        if (file !== root && !file.startsWith(root + path.sep))
            return new Response(null, {status: 403});

        try {
            const body = await fs.readFile(file);
            return new Response(body, {headers: {
                "Content-Type": rendererContentTypes[path.extname(file)] ?? "application/octet-stream",
                "Content-Security-Policy": contentSecurityPolicy,
                "X-Content-Type-Options": "nosniff"
            }});
        } catch {
            return new Response(null, {status: 404});
        }
    });
}

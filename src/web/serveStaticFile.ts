import fs from "node:fs";
import path from "node:path";
import type {IncomingMessage, ServerResponse} from "node:http";
import {rendererContentTypes} from "../core/common/rendererContentTypes.js";


/**
 * Serves a file of the built renderer (GET and HEAD only), never anything outside `root`.
 * Unknown paths get index.html so the app handles them.
 */
export function serveStaticFile(request: IncomingMessage, response: ServerResponse, root: string, headers: Record<string, string>) {
    if (request.method !== "GET" && request.method !== "HEAD") {
        response.writeHead(405, {...headers, "Allow": "GET, HEAD"}).end();
        return;
    }

    let pathname: string;
    try {
        pathname = decodeURIComponent(new URL(request.url ?? "/", "http://127.0.0.1").pathname);
    } catch {
        response.writeHead(400, headers).end();
        return;
    }
    const resolvedRoot = path.resolve(root);
    let file = path.resolve(resolvedRoot, "." + pathname);
    if (file !== resolvedRoot && !file.startsWith(resolvedRoot + path.sep)) {
        response.writeHead(403, headers).end();
        return;
    }
    if (!isFile(file))
        file = path.join(resolvedRoot, "index.html");
    if (!isFile(file)) {
        response.writeHead(404, headers).end("The renderer is not built.");
        return;
    }

    const type = rendererContentTypes[path.extname(file)] ?? "application/octet-stream";
    const cache = file.endsWith("index.html") ? "no-store" : "private, max-age=3600";
    response.writeHead(200, {...headers, "Content-Type": type, "Cache-Control": cache});
    if (request.method === "HEAD") {
        response.end();
        return;
    }
    fs.createReadStream(file).pipe(response);
}

function isFile(file: string) {
    try {
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

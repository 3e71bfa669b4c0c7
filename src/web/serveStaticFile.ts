import fs from "node:fs";
import path from "node:path";
import {pipeline} from "node:stream";
import type {IncomingMessage, ServerResponse} from "node:http";
import {rendererContentTypes} from "../core/common/rendererContentTypes.js";


/**
 * Serves a file of the built renderer (GET and HEAD only), never anything outside `root`: only
 * regular files whose real path (symlinks resolved) is inside the root's real path. Unknown
 * paths, and anything else (a symlink out, a folder, a FIFO), get index.html so the app handles them.
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
    const requested = path.resolve(resolvedRoot, "." + pathname);
    if (!isInside(requested, resolvedRoot)) {
        response.writeHead(403, headers).end();
        return;
    }
    const file = openRegularFileInside(requested, resolvedRoot) ?? openRegularFileInside(path.join(resolvedRoot, "index.html"), resolvedRoot);
    if (file == null) {
        response.writeHead(404, headers).end("The renderer is not built.");
        return;
    }

    const type = rendererContentTypes[path.extname(file.path)] ?? "application/octet-stream";
    const cache = file.path.endsWith("index.html") ? "no-store" : "private, max-age=3600";
    response.writeHead(200, {...headers, "Content-Type": type, "Cache-Control": cache});
    if (request.method === "HEAD") {
        fs.closeSync(file.fd);
        response.end();
        return;
    }
    // pipeline: a client gone mid-file destroys the stream, which closes the file.
    pipeline(fs.createReadStream("", {fd: file.fd}), response, () => undefined);
}

function isInside(file: string, root: string) {
    return file === root || file.startsWith(root + path.sep);
}

/** Opens `file` if it is a regular file whose real path is inside the real path of `root`; else null. */
function openRegularFileInside(file: string, root: string): {path: string, fd: number} | null {
    let real: string;
    let fd: number;
    try {
        real = fs.realpathSync(file);
        if (!isInside(real, fs.realpathSync(root)))
            return null;
        // The real path has no symlink left: one swapped in since is not followed. O_NONBLOCK: a FIFO never blocks the open.
        fd = fs.openSync(real, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    } catch {
        return null;
    }
    if (!fs.fstatSync(fd).isFile()) {
        fs.closeSync(fd);
        return null;
    }
    return {path: real, fd};
}

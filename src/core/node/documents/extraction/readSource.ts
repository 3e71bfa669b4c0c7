import fs from "node:fs/promises";
import {constants} from "node:fs";
import path from "node:path";
import {AttachmentUnreadableError} from "./types.js";
import type {DocumentSource} from "./types.js";
import {describeBytes} from "./describeBytes.js";

/** Folders whose files are views of the running system, not documents: their sizes are made up and reading some never ends. */
const systemRoots = ["/proc/", "/sys/"];

/**
 * The bytes of a document, refused before they are read when the path is not a regular file or
 * the file is over `maxBytes`. Only a path that `stat` calls a regular file is opened (opening a
 * device can have effects of its own), and then without blocking (a FIFO swapped in meanwhile
 * would otherwise wait for a writer forever) and judged again by `fstat` of what was opened;
 * no more than `maxBytes + 1` bytes are ever read.
 */
export async function readSource(source: DocumentSource, maxBytes: number): Promise<{name: string, bytes: Uint8Array}> {
    if (source.kind === "bytes") {
        const name = path.basename(source.name.replace(/\\/g, "/")); // a client's name, possibly a Windows path: only its last part is shown
        checkSize(name, source.bytes.byteLength, maxBytes);
        return {name, bytes: source.bytes};
    }
    const name = path.basename(source.path);
    const realPath = await fs.realpath(source.path).catch((error: NodeJS.ErrnoException) => {
        throw cannotOpen(name, error);
    });
    if (systemRoots.some((root) => `${realPath}/`.startsWith(root)))
        throw new AttachmentUnreadableError(name, "not-a-file", `is a system file (${realPath}), not a document`);

    const pathStat = await fs.stat(realPath).catch((error: NodeJS.ErrnoException) => {
        throw cannotOpen(name, error);
    });
    if (!pathStat.isFile())
        throw new AttachmentUnreadableError(name, "not-a-file", `is ${fileKind(pathStat)}, not a file`);
    checkSize(name, pathStat.size, maxBytes);

    const handle = await fs.open(realPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch((error: NodeJS.ErrnoException) => {
        throw cannotOpen(name, error);
    });
    try {
        const stat = await handle.stat();
        if (!stat.isFile())
            throw new AttachmentUnreadableError(name, "not-a-file", `is ${fileKind(stat)}, not a file`);
        checkSize(name, stat.size, maxBytes);
        const bytes = Buffer.alloc(stat.size);
        let filled = 0;
        while (filled < bytes.byteLength) {
            const {bytesRead} = await handle.read(bytes, filled, bytes.byteLength - filled, filled);
            if (bytesRead === 0)
                break; // shrank meanwhile
            filled += bytesRead;
        }
        const {bytesRead: beyond} = await handle.read(Buffer.alloc(1), 0, 1, filled);
        if (beyond > 0)
            throw new AttachmentUnreadableError(name, "not-a-file", "changed while it was being read; try again once it is saved");
        checkSize(name, filled, maxBytes);
        return {name, bytes: bytes.subarray(0, filled)};
    } finally {
        await handle.close();
    }
}

function checkSize(name: string, size: number, maxBytes: number): void {
    if (size === 0)
        throw new AttachmentUnreadableError(name, "empty", "is empty");
    if (size > maxBytes)
        throw new AttachmentUnreadableError(name, "too-large", `is ${describeBytes(size)}; the limit is ${describeBytes(maxBytes)}`, {bytes: size, limit: maxBytes});
}

function cannotOpen(name: string, error: NodeJS.ErrnoException): AttachmentUnreadableError {
    const why = error.code === "ENOENT" ? "does not exist"
        : error.code === "EACCES" || error.code === "EPERM" ? "cannot be opened: permission denied"
            : `cannot be opened (${error.code ?? error.message})`;
    return new AttachmentUnreadableError(name, "not-a-file", why);
}

function fileKind(stat: {isDirectory(): boolean, isFIFO(): boolean, isSocket(): boolean, isCharacterDevice(): boolean, isBlockDevice(): boolean}): string {
    if (stat.isDirectory())
        return "a folder";
    if (stat.isFIFO())
        return "a named pipe (FIFO)";
    if (stat.isSocket())
        return "a socket";
    if (stat.isCharacterDevice() || stat.isBlockDevice())
        return "a device";
    return "not a regular file";
}

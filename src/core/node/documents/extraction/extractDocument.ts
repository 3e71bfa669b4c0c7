import fs from "node:fs/promises";
import path from "node:path";
import {
    AttachmentUnreadableError, defaultMaxDocumentBytes, type DocumentSource, type ExtractDocumentOptions, type ExtractedDocument
} from "./types.js";

/**
 * Turns a file into text pages. This first version reads plain text (UTF-8, or UTF-16 with a byte
 * order mark) in process; PDF, DOCX and HTML, and extraction in a separate process, come next.
 */
export async function extractDocument(source: DocumentSource, options: ExtractDocumentOptions = {}): Promise<ExtractedDocument> {
    const maxBytes = options.maxBytes ?? defaultMaxDocumentBytes;
    const {name, bytes} = await readSource(source, maxBytes);
    options.signal?.throwIfAborted();
    return {name, format: "text", bytes: bytes.byteLength, pages: [{page: 1, text: decodeText(name, bytes)}]};
}

async function readSource(source: DocumentSource, maxBytes: number): Promise<{name: string, bytes: Uint8Array}> {
    if (source.kind === "bytes") {
        checkSize(source.name, source.bytes.byteLength, maxBytes);
        return {name: source.name, bytes: source.bytes};
    }
    const name = path.basename(source.path);
    const stat = await fs.stat(source.path).catch((error: NodeJS.ErrnoException) => {
        throw new AttachmentUnreadableError(name, "not-a-file", `cannot be opened (${error.code ?? "unknown error"})`);
    });
    if (!stat.isFile() || source.path.startsWith("/proc/") || source.path.startsWith("/sys/"))
        throw new AttachmentUnreadableError(name, "not-a-file", "is not a regular file (a folder, device, pipe or system file)");
    checkSize(name, stat.size, maxBytes);
    return {name, bytes: await fs.readFile(source.path)};
}

function checkSize(name: string, size: number, maxBytes: number): void {
    if (size === 0)
        throw new AttachmentUnreadableError(name, "empty", "is empty");
    if (size > maxBytes)
        throw new AttachmentUnreadableError(name, "too-large", `is ${size} bytes; the limit is ${maxBytes} bytes`, {bytes: size, limit: maxBytes});
}

function decodeText(name: string, bytes: Uint8Array): string {
    const encoding = bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le"
        : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be"
            : "utf-8";
    if (encoding === "utf-8" && bytes.includes(0))
        throw new AttachmentUnreadableError(name, "binary", "looks like a binary file, not text");
    try {
        return new TextDecoder(encoding, {fatal: true, ignoreBOM: false}).decode(bytes);
    } catch {
        throw new AttachmentUnreadableError(name, "binary", `is not valid ${encoding.toUpperCase()} text`);
    }
}

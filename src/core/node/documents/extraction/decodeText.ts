import {AttachmentUnreadableError} from "./types.js";

type TextEncoding = "utf-8" | "utf-16le" | "utf-16be";

/** How many leading bytes decide whether UTF-16 without a byte order mark is likely. */
const utf16SampleBytes = 4096;

/**
 * Text from bytes that are UTF-8, or UTF-16 in either byte order, with or without a byte order
 * mark (the mark is dropped). UTF-16 without a mark is recognised by its NUL bytes: text that is
 * mostly ASCII has a zero in every other byte, always at odd offsets (little-endian) or always at
 * even ones (big-endian). Anything else with a NUL, invalid UTF-8, or many control characters is
 * refused as binary. Line endings become "\n" so that line numbers mean the same everywhere.
 */
export function decodeText(name: string, bytes: Uint8Array): {text: string, encoding: TextEncoding} {
    const encoding = detectEncoding(bytes);
    if (encoding === "utf-8" && bytes.includes(0))
        throw new AttachmentUnreadableError(name, "binary", "looks like a binary file, not text or a document Cleanroom reads (PDF, DOCX, HTML, text or source code)");
    let text: string;
    try {
        text = new TextDecoder(encoding, {fatal: true, ignoreBOM: false}).decode(bytes);
    } catch {
        throw new AttachmentUnreadableError(name, "binary", `looks like a binary file: it is not valid ${encoding.toUpperCase()} text`);
    }
    if (hasManyControlCharacters(text))
        throw new AttachmentUnreadableError(name, "binary", "looks like a binary file: it is full of control characters");
    return {text: text.replace(/\r\n?/g, "\n"), encoding};
}

function detectEncoding(bytes: Uint8Array): TextEncoding {
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
        return "utf-8";
    if (bytes[0] === 0xff && bytes[1] === 0xfe)
        return "utf-16le";
    if (bytes[0] === 0xfe && bytes[1] === 0xff)
        return "utf-16be";
    const pairs = Math.floor(Math.min(bytes.byteLength, utf16SampleBytes) / 2);
    if (pairs === 0)
        return "utf-8";
    let zerosAtEven = 0;
    let zerosAtOdd = 0;
    for (let pair = 0; pair < pairs; pair++) {
        if (bytes[pair * 2] === 0)
            zerosAtEven++;
        if (bytes[pair * 2 + 1] === 0)
            zerosAtOdd++;
    }
    if (zerosAtOdd >= pairs * 0.3 && zerosAtEven <= pairs * 0.02)
        return "utf-16le";
    if (zerosAtEven >= pairs * 0.3 && zerosAtOdd <= pairs * 0.02)
        return "utf-16be";
    return "utf-8";
}

/** More than 1 in 100 characters (of the first 64 Ki) a C0 control other than tab, line feed, form feed, carriage return and escape. */
function hasManyControlCharacters(text: string): boolean {
    const sample = text.slice(0, 65536);
    let controls = 0;
    for (let index = 0; index < sample.length; index++) {
        const code = sample.charCodeAt(index);
        if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d && code !== 0x1b) || code === 0x7f)
            controls++;
    }
    return controls > 0 && (sample.includes("\0") || controls > sample.length / 100);
}

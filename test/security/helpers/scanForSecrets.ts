import fs from "node:fs";
import path from "node:path";

/** A string that must not be found, with a label for the report (never print the value itself in a finding). */
export type Needle = {label: string, value: string};

export type SecretFinding = {
    needle: string,
    /** A file path, or the name given to a text/buffer. */
    where: string,
    encoding: Encoding,
    offset: number
};

export type ScanReport = {
    findings: SecretFinding[],
    bytesScanned: number,
    sourcesScanned: number,
    sources: Array<{where: string, bytes: number}>
};

/** How a secret may sit in bytes: as written, UTF-16 (SQLite's other text encoding, Windows logs), base64 and hex (headers, dumps). */
export type Encoding = "utf8" | "utf16le" | "base64" | "hex";

const encodings: readonly Encoding[] = ["utf8", "utf16le", "base64", "hex"];

export type ScanSource =
    | {kind: "file", path: string}
    | {kind: "directory", path: string}
    | {kind: "text", name: string, text: string}
    | {kind: "buffer", name: string, bytes: Buffer};

/**
 * Searches raw bytes for each needle in every encoding above. Files are read whole, in binary,
 * so deleted-but-not-overwritten records, WAL frames and log lines are all seen. Directories are
 * walked recursively (symlinks not followed). Missing files count as scanned with 0 bytes.
 */
export function scanForSecrets(sources: ScanSource[], needles: Needle[]): ScanReport {
    const patterns = needles.flatMap((needle) => encodings.flatMap((encoding) =>
        encode(needle.value, encoding).map((bytes) => ({needle: needle.label, encoding, bytes}))))
        .filter((pattern) => pattern.bytes.length > 0);
    const report: ScanReport = {findings: [], bytesScanned: 0, sourcesScanned: 0, sources: []};
    const scan = (where: string, bytes: Buffer) => {
        report.bytesScanned += bytes.length;
        report.sourcesScanned++;
        report.sources.push({where, bytes: bytes.length});
        for (const pattern of patterns)
            for (let at = bytes.indexOf(pattern.bytes); at >= 0; at = bytes.indexOf(pattern.bytes, at + 1))
                report.findings.push({needle: pattern.needle, where, encoding: pattern.encoding, offset: at});
    };
    for (const source of sources) {
        if (source.kind === "text")
            scan(source.name, Buffer.from(source.text, "utf8"));
        else if (source.kind === "buffer")
            scan(source.name, source.bytes);
        else if (source.kind === "file")
            scan(source.path, fs.existsSync(source.path) ? fs.readFileSync(source.path) : Buffer.alloc(0));
        else
            for (const file of walkFiles(source.path))
                scan(file, fs.readFileSync(file));
    }
    return report;
}

/** The files SQLite may keep for a database: the file itself, its WAL, its shared-memory index, a rollback journal. */
export function databaseFiles(database: string): ScanSource[] {
    return ["", "-wal", "-shm", "-journal"].map((suffix) => ({kind: "file", path: database + suffix}));
}

/** Every regular file under `dir`, recursively. */
export function walkFiles(dir: string): string[] {
    if (!fs.existsSync(dir))
        return [];
    const files: string[] = [];
    for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory())
            files.push(...walkFiles(full));
        else if (entry.isFile())
            files.push(full);
    }
    return files;
}

/**
 * A recognisable random marker for tests ("canary"), long and unique enough that any hit
 * means the marker was copied, never a coincidence.
 */
export function makeTestCanary(label: string): string {
    const random = Array.from({length: 3}, () => Math.random().toString(36).slice(2, 10)).join("");
    return `CANARY-${label}-${random}`;
}

function encode(value: string, encoding: Encoding): Buffer[] {
    if (encoding === "utf8" || encoding === "utf16le")
        return [Buffer.from(value, encoding)];
    if (encoding === "hex")
        return [Buffer.from(Buffer.from(value, "utf8").toString("hex"), "ascii"), Buffer.from(Buffer.from(value, "utf8").toString("hex").toUpperCase(), "ascii")];
    // Inside a larger base64 text the value starts at one of 3 byte alignments; for each, the characters
    // that depend on the value alone are all but the first and last 4.
    return [0, 1, 2].map((shift) => {
        const encoded = Buffer.concat([Buffer.alloc(shift), Buffer.from(value, "utf8")]).toString("base64").replace(/=+$/, "");
        return Buffer.from(encoded.slice(4, Math.max(4, encoded.length - 4)), "ascii");
    });
}

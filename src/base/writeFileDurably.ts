import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Flushes a folder's entries (a rename or unlink in it) to disk; a no-op where the OS cannot open a folder for that. */
export function fsyncDirectory(dir: string): void {
    let fd: number | null = null;
    try {
        fd = fs.openSync(dir, "r");
        fs.fsyncSync(fd);
    } catch {
        // Windows cannot fsync a folder; the rename is still atomic there
    } finally {
        if (fd != null)
            fs.closeSync(fd);
    }
}

/**
 * Writes `text` to `file` so that a crash leaves either the old file or the whole new one (temp file,
 * fsync, rename, fsync of the folder), with `mode` from its first byte. The temporary file has a
 * random name and is created exclusively (O_CREAT|O_EXCL, `wx`): a symbolic link or a file planted
 * at any name beside `file` is never followed nor reused, so the bytes cannot land in a file of
 * someone else's choosing. The rename replaces a link at `file` itself, never what it points to.
 */
export function writeFileDurably(file: string, text: string, mode = 0o600): void {
    const temp = `${file}.${process.pid}.${crypto.randomBytes(8).toString("hex")}.tmp`;
    const fd = fs.openSync(temp, "wx", mode);
    try {
        try {
            fs.writeFileSync(fd, text);
            fs.fsyncSync(fd);
        } finally {
            fs.closeSync(fd);
        }
        fs.renameSync(temp, file);
    } catch (error) {
        fs.rmSync(temp, {force: true});
        throw error;
    }
    fsyncDirectory(path.dirname(file));
}

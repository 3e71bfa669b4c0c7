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

/** Flushes a file's bytes to disk. */
export function fsyncFile(file: string): void {
    const fd = fs.openSync(file, "r+");
    try {
        fs.fsyncSync(fd);
    } finally {
        fs.closeSync(fd);
    }
}

/** Writes `text` to `file` so that a crash leaves either the old file or the whole new one (temp file, fsync, rename, fsync of the folder). */
export function writeFileDurably(file: string, text: string, mode = 0o600): void {
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, text, {mode});
    fsyncFile(temp);
    fs.renameSync(temp, file);
    fsyncDirectory(path.dirname(file));
}

/** Renames `from` over `to` and flushes the folder: the switch survives a power cut once this returns. */
export function renameDurably(from: string, to: string): void {
    fs.renameSync(from, to);
    fsyncDirectory(path.dirname(to));
}

/**
 * Overwrites a file's bytes with zeros (flushed), then removes it: used for the plain database a
 * migration replaced, so its text does not stay in the blocks the file system frees. (On an SSD or
 * a copy-on-write file system the old blocks may survive elsewhere; encryption from the start avoids that.)
 */
export function zeroAndRemove(file: string): void {
    const stat = fs.statSync(file, {throwIfNoEntry: false});
    if (stat == null)
        return;
    const fd = fs.openSync(file, "r+");
    try {
        const zeros = Buffer.alloc(Math.min(stat.size, 1 << 20));
        for (let at = 0; at < stat.size; at += zeros.length)
            fs.writeSync(fd, zeros, 0, Math.min(zeros.length, stat.size - at), at);
        fs.fsyncSync(fd);
    } finally {
        fs.closeSync(fd);
    }
    fs.rmSync(file, {force: true});
    fsyncDirectory(path.dirname(file));
}

import fs from "node:fs";
import path from "node:path";
import {fsyncDirectory} from "../../../../base/writeFileDurably.js";

// Shared with the Electron main process, which may not import the core: see src/base/.
export {fsyncDirectory, writeFileDurably} from "../../../../base/writeFileDurably.js";

/** Flushes a file's bytes to disk. */
export function fsyncFile(file: string): void {
    const fd = fs.openSync(file, "r+");
    try {
        fs.fsyncSync(fd);
    } finally {
        fs.closeSync(fd);
    }
}

/**
 * Creates `file`, empty, with mode 0600 from the start, exclusively (`wx`): it fails with EEXIST when
 * anything (a file, a symbolic link) is already there, and never follows a link. SQLite creates a
 * database as 0644 less the umask, and its -wal and -shm files with the database file's mode: a
 * database created here first keeps all three private.
 */
export function createPrivateFile(file: string): void {
    fs.closeSync(fs.openSync(file, "wx", 0o600));
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

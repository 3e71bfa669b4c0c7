import fs from "node:fs";
import path from "node:path";

/** A process that holds a lock on a file: its pid, and what it runs ("node cleanroom.cjs chat") when the OS tells. */
export type LockHolder = {pid: number, command: string | null};

/**
 * The other processes holding a POSIX lock on `file` (SQLite's locks are such locks), read from
 * Linux's `/proc/locks`; processes waiting for a lock are not holders. Empty where the OS has no
 * such list (macOS, Windows) or the file is gone: the error then says "another Cleanroom process"
 * without a pid.
 */
export function lockHolders(file: string): LockHolder[] {
    let table: string;
    let stat: fs.BigIntStats | undefined;
    try {
        stat = fs.statSync(file, {bigint: true, throwIfNoEntry: false});
        table = stat != null ? fs.readFileSync("/proc/locks", "utf8") : "";
    } catch {
        return [];
    }
    if (stat == null)
        return [];
    // glibc's dev_t: the major and minor numbers /proc/locks prints (in hex) before the inode.
    const major = ((stat.dev >> 8n) & 0xfffn) | ((stat.dev >> 32n) & ~0xfffn);
    const minor = (stat.dev & 0xffn) | ((stat.dev >> 12n) & ~0xffn);
    const id = `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}:${stat.ino}`;
    const pids = new Set<number>();
    for (const line of table.split("\n")) {
        // "1: POSIX  ADVISORY  READ 13615 fe:00:2149186 1073741826 1073742335"; a waiter's line has "->" after the number.
        const fields = line.trim().split(/\s+/);
        if (fields[1] === "->" || fields[5] !== id)
            continue;
        const pid = Number(fields[4]);
        if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid)
            pids.add(pid);
    }
    return [...pids].map((pid) => ({pid, command: commandOf(pid)}));
}

/**
 * What a process runs, in a few words from its command line: "cleanroom.cjs chat" for the CLI,
 * "web.mjs" or "webCoreEntry.mjs" for web mode (its launcher, an entry of the compiled bundle),
 * "web/main.ts" for web mode from source, else its first words ("node server.js"); file names
 * without their folders, options and later arguments left out.
 */
function commandOf(pid: number): string | null {
    let words: string[];
    try {
        words = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((word) => word !== "" && !word.startsWith("-"));
    } catch {
        return null; // gone meanwhile, or not ours to read
    }
    const cli = words.findIndex((word) => /cleanroom/i.test(path.basename(word)));
    if (cli >= 0)
        return words.slice(cli, cli + 2).map((word) => path.basename(word)).join(" ").slice(0, 80);
    const compiled = words.find((word) => /[\\/](bin|out[\\/]cli[^\\/]*[\\/][^\\/]+)[\\/][^\\/]+\.mjs$/.test(word));
    if (compiled != null)
        return path.basename(compiled);
    const entry = words.find((word) => /[\\/](web|cli|utility)[\\/][^\\/]+$/.test(word));
    if (entry != null)
        return entry.split(/[\\/]/).slice(-2).join("/");
    return words.length === 0 ? null : words.slice(0, 3).map((word) => path.basename(word)).join(" ").slice(0, 80);
}

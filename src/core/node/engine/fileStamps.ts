import fs from "node:fs";
import path from "node:path";

/** A file's path, size and modification time as one string (a fingerprint's part), or null when there is no such file. */
export function fileStamp(file: string): string | null {
    try {
        const stat = fs.statSync(file);
        return `${file}:${stat.size}:${stat.mtimeMs}`;
    } catch {
        return null;
    }
}

/**
 * A folder's entries (those `include` keeps) stamped (`fileStamp`), sorted; empty when there is
 * no such folder. Only the entries kept are looked at: /dev holds hundreds, of which a few are NVIDIA's.
 */
export function folderStamps(dir: string, include: (name: string) => boolean = () => true): string[] {
    try {
        return fs.readdirSync(dir).filter(include).sort().map((entry) => fileStamp(path.join(dir, entry)) ?? entry);
    } catch {
        return [];
    }
}

import type fs from "node:fs";

/** Which file, and its size and change times to the nanosecond: any write or replacement changes it (the change time cannot be set back). */
export function fileIdentity(stat: fs.BigIntStats): string {
    return [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs].join(":");
}

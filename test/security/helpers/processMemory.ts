import fs from "node:fs";
import type {Needle} from "./scanForSecrets.js";

export type MemoryFinding = {needle: string, encoding: "utf8" | "utf16le", address: string, region: string};

export type MemoryScan = {pid: number, findings: MemoryFinding[], bytesScanned: number, regionsScanned: number, regionsUnreadable: number};

/** Bytes read from /proc/<pid>/mem at a time; consecutive reads overlap by the longest needle, so no hit is cut in two. */
const chunkBytes = 8 << 20;

/**
 * Searches every readable mapping of a running process (Linux: /proc/<pid>/maps, read through
 * /proc/<pid>/mem, which needs the right to trace it: the same user, and on a Yama system a
 * descendant) for each needle, as UTF-8 (also V8's one-byte strings for ASCII) and UTF-16LE (V8's
 * two-byte strings). Heap, stacks, native allocations, mapped files: everything the process could
 * read. Mappings that refuse reading ([vvar], device memory) are counted, not failed on.
 */
export function scanProcessMemory(pid: number, needles: Needle[]): MemoryScan {
    const patterns = needles.flatMap((needle) => (["utf8", "utf16le"] as const).map((encoding) => ({needle: needle.label, encoding, bytes: Buffer.from(needle.value, encoding)})));
    const overlap = Math.max(...patterns.map((pattern) => pattern.bytes.length)) - 1;
    const scan: MemoryScan = {pid, findings: [], bytesScanned: 0, regionsScanned: 0, regionsUnreadable: 0};
    const memory = fs.openSync(`/proc/${pid}/mem`, "r");
    const buffer = Buffer.alloc(chunkBytes + overlap);
    try {
        for (const region of readableRegions(pid)) {
            scan.regionsScanned++;
            let carried = 0;
            for (let at = region.start; at < region.end;) {
                const want = Number(region.end - at < BigInt(chunkBytes) ? region.end - at : BigInt(chunkBytes));
                let read: number;
                try {
                    read = fs.readSync(memory, buffer, carried, want, at);
                } catch {
                    scan.regionsUnreadable++;
                    break;
                }
                if (read <= 0)
                    break;
                const window = buffer.subarray(0, carried + read);
                const windowStart = at - BigInt(carried);
                for (const pattern of patterns)
                    for (let hit = window.indexOf(pattern.bytes); hit >= 0; hit = window.indexOf(pattern.bytes, hit + 1))
                        if (hit + pattern.bytes.length > carried) // a hit wholly in the carried bytes was counted by the read before
                            scan.findings.push({needle: pattern.needle, encoding: pattern.encoding, address: `0x${(windowStart + BigInt(hit)).toString(16)}`, region: region.name});
                scan.bytesScanned += read;
                carried = Math.min(overlap, window.length);
                window.copy(buffer, 0, window.length - carried);
                at += BigInt(read);
            }
        }
    } finally {
        fs.closeSync(memory);
    }
    return scan;
}

/** How many hits each needle has in `scans`, by label (0 for a needle that has none). */
export function hitsByNeedle(scans: MemoryScan[], needles: Needle[]): Record<string, number> {
    return Object.fromEntries(needles.map((needle) => [needle.label, scans.reduce((sum, scan) => sum + scan.findings.filter((finding) => finding.needle === needle.label).length, 0)]));
}

/** `pid` and every process below it (Linux: /proc/<pid>/task/<tid>/children). */
export function processTree(pid: number): number[] {
    const children = fs.readdirSync(`/proc/${pid}/task`).flatMap((task) => {
        try {
            return fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
        } catch {
            return [];
        }
    });
    return [pid, ...children.flatMap((child) => fs.existsSync(`/proc/${child}`) ? processTree(child) : [])];
}

function readableRegions(pid: number) {
    return fs.readFileSync(`/proc/${pid}/maps`, "utf8").split("\n").filter(Boolean).flatMap((line) => {
        const [range, permissions, , , , ...name] = line.split(/\s+/);
        const [start, end] = range!.split("-").map((hex) => BigInt(`0x${hex}`));
        const regionName = name.join(" ");
        return permissions!.startsWith("r") && regionName !== "[vvar]" && regionName !== "[vvar_vclock]" ? [{start: start!, end: end!, name: regionName}] : [];
    });
}

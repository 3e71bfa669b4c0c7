import fs from "node:fs";
import path from "node:path";
import {StoragePathError} from "./StoragePathError.js";

export type EnsureDirectoryOptions = {
    /** What the folder is for, named in errors ("the database"). */
    what: string,
    /** Mode of the folders created. Defaults to `0o700`. */
    mode?: number
};

const defaultMode = 0o700;

/** Filesystems of the kernel that show its state as files and cannot hold a user's data (statfs `f_type`). */
const kernelFilesystems: ReadonlyMap<number, string> = new Map([
    [0x9fa0, "procfs, the kernel's view of its processes"],
    [0x62656572, "sysfs, the kernel's view of its devices"],
    [0x64626720, "debugfs"],
    [0x74726163, "tracefs"],
    [0x73636673, "securityfs"],
    [0x27e0eb, "a cgroup filesystem"],
    [0x63677270, "a cgroup filesystem"]
]);
const kernelRoots = ["/proc", "/sys"];

/**
 * Makes sure `dir` is a folder that can hold files, creating what is missing one level at a
 * time. Node's `mkdirSync(dir, {recursive: true})` spins forever on some paths (`/proc/nope`,
 * where mkdir answers ENOENT with the parent present); this walks the parent chain instead and
 * fails at once, naming the path and the reason: a kernel filesystem (/proc, /sys), a part of
 * the path that is not a folder, or a mkdir that failed.
 */
export function ensureDirectory(dir: string, {what, mode = defaultMode}: EnsureDirectoryOptions): string {
    const target = path.resolve(dir);
    const missing: string[] = [];
    let existing = target;
    for (;;) {
        const stat = statOrNull(existing, what);
        if (stat != null) {
            if (!stat.isDirectory())
                throw new StoragePathError(what, target, existing === target ? "it is a file, not a folder" : `${existing} is a file, not a folder`);
            break;
        }
        const parent = path.dirname(existing);
        if (parent === existing)
            throw new StoragePathError(what, target, `the root ${existing} does not exist`);
        missing.unshift(path.basename(existing));
        existing = parent;
    }
    refuseKernelFilesystem(existing, target, what);

    let current = existing;
    for (const name of missing) {
        current = path.join(current, name);
        try {
            fs.mkdirSync(current, {mode});
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST" && statOrNull(current, what)?.isDirectory() === true)
                continue; // created by someone else meanwhile
            throw new StoragePathError(what, target, `the folder ${current} could not be created (${describeErrno(error)})`,
                {errno: (error as NodeJS.ErrnoException).code ?? null}, error);
        }
    }
    return target;
}

/** Refuses a path on a kernel filesystem (by where it really is, and by the filesystem's type). */
function refuseKernelFilesystem(existing: string, target: string, what: string) {
    let real = existing;
    try {
        real = fs.realpathSync(existing);
    } catch {
        // keep the path as given
    }
    const root = kernelRoots.find((kernelRoot) => real === kernelRoot || real.startsWith(kernelRoot + "/"));
    let type: number | null = null;
    try {
        type = Number(fs.statfsSync(real).type);
    } catch {
        // statfs is not available everywhere; the path check still applies
    }
    const kind = type != null ? kernelFilesystems.get(type) : undefined;
    if (root != null || kind != null)
        throw new StoragePathError(what, target, `${root ?? real} is ${kind ?? "a kernel filesystem"}: it cannot hold files`);
}

function statOrNull(candidate: string, what: string): fs.Stats | null {
    try {
        return fs.statSync(candidate);
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR")
            return null;
        throw new StoragePathError(what, candidate, `it cannot be examined (${describeErrno(error)})`, {errno: code ?? null}, error);
    }
}

export function describeErrno(error: unknown): string {
    const code = (error as NodeJS.ErrnoException)?.code;
    const known: Record<string, string> = {
        EACCES: "permission denied", EPERM: "operation not permitted", EROFS: "read-only filesystem", ENOSPC: "no space left on the disk",
        EDQUOT: "disk quota exceeded", ENAMETOOLONG: "name too long", ELOOP: "too many symbolic links", ENOTDIR: "a part of the path is not a folder",
        ENOENT: "no such file or folder", EIO: "input/output error"
    };
    if (code != null)
        return known[code] != null ? `${code}: ${known[code]}` : code;
    return error instanceof Error ? error.message : String(error);
}

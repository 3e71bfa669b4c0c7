import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import {CleanroomError} from "../../common/errors.js";

/**
 * A private folder (mode 0700) for the scrub's transient files: under `$CLEANROOM_SCRATCH_DIR`
 * when set, else on RAM-backed /dev/shm where the OS has one, else the temp folder. Files here hold zeros when all goes well and residue
 * when it does not, so each is deleted as soon as it has been used, and the folder on dispose.
 */
export class PrivateScratchDir {
    public readonly path: string;
    public readonly ramBacked: boolean;
    /** Scratch folders of processes that died without removing theirs (kill -9, a crash), removed when this one was made. */
    public readonly staleFoldersRemoved: number;
    private _disposed = false;

    private constructor(dirPath: string, ramBacked: boolean, staleFoldersRemoved: number) {
        this.path = dirPath;
        this.ramBacked = ramBacked;
        this.staleFoldersRemoved = staleFoldersRemoved;
    }

    public static create(preferredParent?: string): PrivateScratchDir {
        const fromEnv = process.env.CLEANROOM_SCRATCH_DIR;
        const candidates = preferredParent != null ? [preferredParent] : fromEnv != null && fromEnv !== "" ? [fromEnv] : ["/dev/shm", os.tmpdir()];
        for (const parent of candidates) {
            try {
                fs.accessSync(parent, fs.constants.W_OK);
                const staleFoldersRemoved = removeStaleScratchDirs(parent);
                const dir = fs.mkdtempSync(path.join(parent, `${folderPrefix}${process.pid}-`));
                fs.chmodSync(dir, 0o700);
                return new PrivateScratchDir(dir, parent === "/dev/shm" || isRamBacked(parent), staleFoldersRemoved);
            } catch {
                // try the next candidate
            }
        }
        throw new CleanroomError("STORAGE_PATH_UNUSABLE", `No writable folder for scrub files among ${candidates.join(", ")}.`, {candidates: candidates.length});
    }

    public newFilePath(label: string) {
        if (this._disposed)
            throw new Error("The scrub scratch folder was disposed.");

        return path.join(this.path, `${label}-${crypto.randomBytes(8).toString("hex")}.state`);
    }

    public removeFile(filePath: string) {
        fs.rmSync(filePath, {force: true});
    }

    public dispose() {
        if (this._disposed)
            return;

        this._disposed = true;
        fs.rmSync(this.path, {recursive: true, force: true});
    }

    public [Symbol.dispose]() {
        this.dispose();
    }
}

const folderPrefix = "cleanroom-scrub-";
/** Folders of the naming before the owner's pid was part of it are stale after this long. */
const unownedFolderMaxAgeMs = 24 * 60 * 60_000;

/**
 * Removes the scratch folders in `parent` whose process is gone: a kill -9 or a crash skips the
 * removal, and what such a folder holds is exactly what must not stay (residue of a KV cache).
 */
export function removeStaleScratchDirs(parent: string, now = Date.now()): number {
    let removed = 0;
    let names: string[];
    try {
        names = fs.readdirSync(parent);
    } catch {
        return 0;
    }
    for (const name of names) {
        if (!name.startsWith(folderPrefix))
            continue;
        const owner = /^cleanroom-scrub-(\d+)-/.exec(name);
        const folder = path.join(parent, name);
        try {
            const stale = owner != null
                ? !isProcessAlive(Number(owner[1]))
                : now - fs.statSync(folder).mtimeMs > unownedFolderMaxAgeMs;
            if (stale) {
                fs.rmSync(folder, {recursive: true, force: true});
                removed++;
            }
        } catch {
            // Another user's folder, or gone already: not ours to remove.
        }
    }
    return removed;
}

function isProcessAlive(pid: number) {
    if (pid === process.pid)
        return true;
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        // EPERM: alive, but another user's.
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}

/** True when `dir` is on a tmpfs (Linux), where files never reach a disk. */
function isRamBacked(dir: string) {
    try {
        const mounts = fs.readFileSync("/proc/self/mounts", "utf8").split("\n").map((line) => line.split(" "));
        const real = fs.realpathSync(dir);
        const mount = mounts.filter(([, point]) => point != null && (real === point || real.startsWith(point.endsWith("/") ? point : point + "/")))
            .sort((a, b) => b[1]!.length - a[1]!.length)[0];
        return mount?.[2] === "tmpfs";
    } catch {
        return false;
    }
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";

/**
 * A private folder (mode 0700) for the scrub's transient files: under `$CLEANROOM_SCRATCH_DIR`
 * when set, else on RAM-backed /dev/shm where the OS has one, else the temp folder. Files here hold zeros when all goes well and residue
 * when it does not, so each is deleted as soon as it has been used, and the folder on dispose.
 */
export class PrivateScratchDir {
    public readonly path: string;
    public readonly ramBacked: boolean;
    private _disposed = false;

    private constructor(dirPath: string, ramBacked: boolean) {
        this.path = dirPath;
        this.ramBacked = ramBacked;
    }

    public static create(preferredParent?: string): PrivateScratchDir {
        const fromEnv = process.env.CLEANROOM_SCRATCH_DIR;
        const candidates = preferredParent != null ? [preferredParent] : fromEnv != null && fromEnv !== "" ? [fromEnv] : ["/dev/shm", os.tmpdir()];
        for (const parent of candidates) {
            try {
                fs.accessSync(parent, fs.constants.W_OK);
                const dir = fs.mkdtempSync(path.join(parent, "cleanroom-scrub-"));
                fs.chmodSync(dir, 0o700);
                return new PrivateScratchDir(dir, parent === "/dev/shm" || isRamBacked(parent));
            } catch {
                // try the next candidate
            }
        }
        throw new Error(`No writable folder for scrub files among ${candidates.join(", ")}.`);
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

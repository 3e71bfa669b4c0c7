import {execFileSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type SmallDisk = {
    /** The mount point: a folder of its own, on a filesystem of `sizeBytes`. */
    dir: string,
    /** Free bytes on it now (statfs). */
    freeBytes(): number,
    /** Grows or shrinks the filesystem in place (what was written stays). */
    resize(sizeBytes: number): void,
    unmount(): void
};

/**
 * A real, small filesystem for disk-full tests: a tmpfs of `sizeBytes` mounted on a fresh folder
 * under the temp folder. Mounting needs root (or CAP_SYS_ADMIN); where it is not permitted this
 * returns the reason, so that the test can be skipped saying why. Under CI=true it must work:
 * a failure to mount throws there.
 */
export function mountSmallDisk(sizeBytes: number): SmallDisk | {unavailable: string} {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-small-disk-"));
    try {
        execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0700`, "tmpfs", dir], {stdio: ["ignore", "ignore", "pipe"]});
    } catch (error) {
        fs.rmSync(dir, {recursive: true, force: true});
        const reason = `cannot mount a ${sizeBytes}-byte tmpfs here (${String((error as {stderr?: Buffer}).stderr ?? error).trim() || "mount failed"})`;
        if (process.env.CI === "true")
            throw new Error(`${reason}; under CI=true the disk-full tests must run, give the runner root or CAP_SYS_ADMIN`);
        return {unavailable: reason};
    }
    return {
        dir,
        freeBytes: () => {
            const stats = fs.statfsSync(dir);
            return Number(stats.bavail) * Number(stats.bsize);
        },
        resize: (size) => execFileSync("mount", ["-o", `remount,size=${size}`, dir]),
        unmount: () => {
            execFileSync("umount", [dir]);
            fs.rmSync(dir, {recursive: true, force: true});
        }
    };
}

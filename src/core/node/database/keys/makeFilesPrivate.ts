import fs from "node:fs";

/**
 * Makes files that others may read or write private (mode 0600): the database, its -wal and -shm and
 * its key file as versions before #27 left them (0644 less the umask). A symbolic link is not
 * followed, and a file this user does not own (EPERM) is left as it is: opening it says more than
 * this could. No-op on Windows, whose files have no such mode bits.
 */
export function makeFilesPrivate(files: string[]): void {
    if (process.platform === "win32")
        return;
    for (const file of files) {
        const stat = fs.lstatSync(file, {throwIfNoEntry: false});
        if (stat?.isFile() !== true || (stat.mode & 0o077) === 0)
            continue;
        try {
            fs.chmodSync(file, 0o600);
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EPERM")
                throw error;
        }
    }
}

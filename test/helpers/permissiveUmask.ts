import fs from "node:fs";
import {afterAll, beforeAll} from "vitest";

/** Runs the enclosing suite under umask 0o022, as most desktops have: a file created without an explicit mode is then 0644. */
export function usePermissiveUmask() {
    let previousUmask = 0;
    beforeAll(() => {
        previousUmask = process.umask(0o022);
    });
    afterAll(() => {
        process.umask(previousUmask);
    });
}

/** A file's permission bits in octal, as `ls` shows them ("0600"). */
export function octalModeOf(file: string): string {
    return `0${(fs.statSync(file).mode & 0o777).toString(8)}`;
}

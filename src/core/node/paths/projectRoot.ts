import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

/**
 * The project's folder (where its package.json is) that holds the module at `moduleUrl`: two folders
 * up in the sources (src/web/), three from the compiled bundle's out/cli/<build>/, which has no
 * package.json of its own. Falls back on the sources' two folders up when none is found.
 */
export function projectRootOf(moduleUrl: string): string {
    const moduleDir = path.dirname(fileURLToPath(moduleUrl));
    for (let folder = moduleDir; ; folder = path.dirname(folder)) {
        if (isCleanroomPackage(path.join(folder, "package.json")))
            return folder;
        if (path.dirname(folder) === folder)
            return path.resolve(moduleDir, "../..");
    }
}

function isCleanroomPackage(file: string) {
    try {
        return (JSON.parse(fs.readFileSync(file, "utf8")) as {name?: unknown}).name === "cleanroom";
    } catch {
        return false;
    }
}

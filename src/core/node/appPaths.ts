import os from "node:os";
import path from "node:path";

/**
 * Where Cleanroom keeps its data: `$CLEANROOM_HOME` when set, else the platform's per-user
 * application data folder.
 */
export function appDataDir(): string {
    if (process.env.CLEANROOM_HOME != null && process.env.CLEANROOM_HOME !== "")
        return path.resolve(process.env.CLEANROOM_HOME);

    const home = os.homedir();
    if (process.platform === "darwin")
        return path.join(home, "Library", "Application Support", "Cleanroom");
    if (process.platform === "win32")
        return path.join(process.env.APPDATA ?? path.join(home, "AppData", "Roaming"), "Cleanroom");

    return path.join(process.env.XDG_DATA_HOME ?? path.join(home, ".local", "share"), "cleanroom");
}

export function defaultDatabasePath() {
    return path.join(appDataDir(), "cleanroom.db");
}

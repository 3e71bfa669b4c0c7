import os from "node:os";
import path from "node:path";

export type DefaultModelsDirOptions = {
    /** Environment to read `CLEANROOM_HOME`, `XDG_DATA_HOME` and `APPDATA` from. Defaults to `process.env`. */
    env?: NodeJS.ProcessEnv,
    /** Defaults to `process.platform`. */
    platform?: NodeJS.Platform,
    /** Defaults to `os.homedir()`. */
    home?: string
};

/**
 * The app's models folder, where downloads go and where `registry.json` lives:
 * `$CLEANROOM_HOME/models` when set; else `$XDG_DATA_HOME/cleanroom/models` (default
 * `~/.local/share/cleanroom/models`) on Linux, `~/Library/Application Support/Cleanroom/models`
 * on macOS and `%APPDATA%\Cleanroom\models` on Windows.
 */
export function defaultModelsDir({env = process.env, platform = process.platform, home = os.homedir()}: DefaultModelsDirOptions = {}): string {
    const join = platform === "win32" ? path.win32.join : path.posix.join;
    if (env.CLEANROOM_HOME != null && env.CLEANROOM_HOME !== "")
        return path.join(env.CLEANROOM_HOME, "models");

    if (platform === "win32")
        return join(env.APPDATA != null && env.APPDATA !== "" ? env.APPDATA : join(home, "AppData", "Roaming"), "Cleanroom", "models");

    if (platform === "darwin")
        return join(home, "Library", "Application Support", "Cleanroom", "models");

    const dataHome = env.XDG_DATA_HOME != null && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(home, ".local", "share");
    return join(dataHome, "cleanroom", "models");
}

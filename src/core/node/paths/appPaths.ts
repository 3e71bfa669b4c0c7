import os from "node:os";
import path from "node:path";
import envPaths from "env-paths";

/**
 * Where Cleanroom keeps its data: `$CLEANROOM_HOME` when set; else the platform's per-user data
 * folder as `env-paths` finds it: `$XDG_DATA_HOME/cleanroom` (default `~/.local/share/cleanroom`)
 * on Linux, `~/Library/Application Support/Cleanroom` on macOS, `%LOCALAPPDATA%\Cleanroom\Data` on
 * Windows. A relative `XDG_DATA_HOME` is ignored, as the XDG spec says. The one place that decides
 * it: the database, the models folder and the desktop launcher's records all live below it.
 */
export function appDataDir(): string {
    const home = process.env.CLEANROOM_HOME;
    if (home != null && home !== "")
        return path.resolve(home);

    const linux = process.platform !== "darwin" && process.platform !== "win32";
    if (linux) {
        // env-paths' rule, but with the home folder of now: env-paths reads it once, when first imported.
        const xdgDataHome = process.env.XDG_DATA_HOME;
        return path.join(xdgDataHome != null && path.isAbsolute(xdgDataHome) ? xdgDataHome : path.join(os.homedir(), ".local", "share"), "cleanroom");
    }

    return envPaths("Cleanroom", {suffix: ""}).data;
}

/**
 * Where Cleanroom keeps what it found out about this machine rather than about its user: where
 * `--gpu auto` runs (`gpu-probe.json`) and which llama.cpp binaries passed node-llama-cpp's load test
 * (`binary-tests.json`). `$CLEANROOM_CACHE_DIR` when set, else the data folder. Each record names the
 * machine, drivers and build it holds for, so several data folders (or processes) can share one:
 * the tests do, each with a data folder of its own (test/setup/hermetic.ts).
 */
export function machineFactsDir(): string {
    const dir = process.env.CLEANROOM_CACHE_DIR;
    return dir != null && dir !== "" ? path.resolve(dir) : appDataDir();
}

/** The SQLite file of conversations, settings and the audit log. */
export function defaultDatabasePath() {
    return path.join(appDataDir(), "cleanroom.db");
}

/** The models folder, where downloads go and where `registry.json` lives. */
export function defaultModelsDir() {
    return path.join(appDataDir(), "models");
}

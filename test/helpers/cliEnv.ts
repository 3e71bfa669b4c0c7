import fs from "node:fs";
import path from "node:path";
import {tempDir} from "./tempCore.js";

/**
 * An environment for a spawned CLI that touches nothing of the user's: its own CLEANROOM_HOME
 * and TMPDIR under a fresh temp folder, no CLEANROOM_MODEL and no cloud key unless given.
 */
export function hermeticCliEnv(label: string, extra: NodeJS.ProcessEnv = {}) {
    const root = tempDir(label);
    const home = path.join(root, "home");
    const tmp = path.join(root, "tmp");
    fs.mkdirSync(home);
    fs.mkdirSync(tmp);
    const env: NodeJS.ProcessEnv = {
        ...process.env, CLEANROOM_HOME: home, TMPDIR: tmp, CLEANROOM_MODEL: "", CLEANROOM_CLOUD_API_KEY: "", CLEANROOM_DEBUG: "", ...extra
    };
    return {env, home, tmp, db: path.join(root, "cli.db")};
}

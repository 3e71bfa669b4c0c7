import {spawn, spawnSync} from "node:child_process";
import {createRequire} from "node:module";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {reportWebModeFailure, runWebMode} from "../web/runWebMode.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The Electron binary's path when it was downloaded at install time, else null. */
function electronBinary(): string | null {
    try {
        const binary = createRequire(import.meta.url)("electron") as unknown;
        return typeof binary === "string" ? binary : null;
    } catch {
        return null;
    }
}

function hasDisplay() {
    if (process.platform === "darwin" || process.platform === "win32")
        return true;
    return (process.env.DISPLAY ?? "") !== "" || (process.env.WAYLAND_DISPLAY ?? "") !== "";
}

/**
 * `npm start`: the desktop app when Electron and a display are available; otherwise one line
 * saying so, then web mode (its URL on the next line).
 */
async function start() {
    const binary = electronBinary();
    if (binary != null && hasDisplay()) {
        const build = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build:electron"], {cwd: repoRoot, stdio: "inherit"});
        if (build.status !== 0)
            throw new Error("building the desktop app failed");
        const app = spawn(binary, [path.join(repoRoot, "out/main/index.cjs"), ...process.argv.slice(2)], {cwd: repoRoot, stdio: "inherit"});
        app.on("exit", (code) => process.exit(code ?? 0));
        return;
    }

    const reason = binary == null ? "the Electron binary is not installed" : "no display is available";
    process.stdout.write(`Desktop app unavailable (${reason}): starting web mode instead.\n`);
    await runWebMode(process.argv.slice(2));
}

start().catch(reportWebModeFailure);

import {spawn, spawnSync} from "node:child_process";
import path from "node:path";
import {projectRootOf} from "../core/node/paths/projectRoot.js";
import {reportWebModeFailure, runWebMode} from "../web/runWebMode.js";
import {clearFetchFailure, recentFetchFailure, recordFetchFailure} from "./desktopFetchRecord.js";
import {fetchElectronBinary, findElectronBinary} from "./electronBinary.js";
import {openInBrowser} from "./openInBrowser.js";

const repoRoot = projectRootOf(import.meta.url);

function hasDisplay() {
    if (process.platform === "darwin" || process.platform === "win32")
        return true;
    return (process.env.DISPLAY ?? "") !== "" || (process.env.WAYLAND_DISPLAY ?? "") !== "";
}

type DesktopVerdict = {binary: string} | {unavailable: string};

/**
 * The Electron binary, fetched on the first start where a display exists (npm install never
 * downloads it), or why the desktop app cannot run.
 */
async function desktopBinary(): Promise<DesktopVerdict> {
    if (!hasDisplay())
        return {unavailable: "no display is available"};

    const installed = findElectronBinary();
    if (installed != null)
        return {binary: installed};

    const failure = recentFetchFailure();
    if (failure != null)
        return {unavailable: `the Electron binary could not be fetched at ${failure.failedAt}: ${failure.reason}; \`npm run desktop:install\` tries again`};

    process.stdout.write("Fetching the Electron binary for the desktop app (about 100 MB, first start only)...\n");
    const fetched = await fetchElectronBinary();
    if (fetched.ok) {
        clearFetchFailure();
        return {binary: fetched.binary};
    }
    recordFetchFailure(fetched.reason);
    return {unavailable: `the Electron binary could not be fetched: ${fetched.reason}; \`npm run desktop:install\` tries again`};
}

/**
 * `npm start`: the desktop app when Electron and a display are available; otherwise one line
 * saying why, then web mode (its URL on the next line, and the browser opened where there is a
 * display). `--web` goes straight to web mode; `--no-open` keeps the browser closed.
 */
async function start(args: string[]) {
    // Neither front end runs the core here: web mode and the desktop app start it in a process of its own, with the core's thread pool.
    const forceWeb = args.includes("--web");
    const openBrowser = !args.includes("--no-open") && process.env.CLEANROOM_NO_BROWSER !== "1";
    const forwarded = args.filter((arg) => arg !== "--web" && arg !== "--no-open");

    const verdict: DesktopVerdict = forceWeb ? {unavailable: "--web was given"} : await desktopBinary();
    if ("binary" in verdict) {
        const build = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build:electron"], {cwd: repoRoot, stdio: "inherit"});
        if (build.status !== 0)
            throw new Error("building the desktop app failed");
        const app = spawn(verdict.binary, [path.join(repoRoot, "out/main/index.cjs"), ...forwarded], {cwd: repoRoot, stdio: "inherit"});
        app.on("exit", (code) => process.exit(code ?? 0));
        return;
    }

    if (!forceWeb)
        process.stdout.write(`Desktop app unavailable (${verdict.unavailable}): starting web mode instead.\n`);
    const {url} = await runWebMode(forwarded);
    if (url != null && openBrowser && hasDisplay())
        openInBrowser(url);
}

start(process.argv.slice(2)).catch(reportWebModeFailure);

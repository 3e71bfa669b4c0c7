import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export type RendererBuild = {outDir: string, built: boolean};

/** Inputs whose change makes the built renderer stale. */
const sourceEntries = ["renderer", "src/core/common", "vite.config.ts"];

/**
 * Beside the output (not in it, so the server never serves it): which build of React and the other packages this is.
 * Vite takes it from the environment's NODE_ENV first (a shell's `development`, a test runner's `test`), which would
 * give the app React's development build: slower (a page load about 10 % more CPU), and not what users run. The page's
 * hash ties the stamp to the build it describes (its asset names are hashes of their content): a build made since by
 * other means (`npm run build:renderer` in a shell whose NODE_ENV is `development`) is built again.
 */
type BuildStamp = {nodeEnv: string, indexHtmlSha256: string};

/** Builds the renderer with Vite when its output is missing, older than any of its sources, or not a production build. */
export async function ensureRendererBuilt(repoRoot: string): Promise<RendererBuild> {
    const outDir = path.join(repoRoot, "dist", "renderer");
    const stampFile = path.join(repoRoot, "dist", "renderer-build.json");
    const indexHtml = path.join(outDir, "index.html");
    const builtAt = mtimeOf(indexHtml);
    const newestSource = Math.max(...sourceEntries.map((entry) => newestMtime(path.join(repoRoot, entry))));
    const stamp = readStamp(stampFile);
    if (builtAt != null && builtAt >= newestSource && stamp?.nodeEnv === "production" && stamp.indexHtmlSha256 === sha256Of(indexHtml))
        return {outDir, built: false};

    const {build} = await import("vite");
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
        await build({configFile: path.join(repoRoot, "vite.config.ts"), logLevel: "warn"});
    } finally {
        if (nodeEnv == null)
            delete process.env.NODE_ENV;
        else
            process.env.NODE_ENV = nodeEnv;
    }
    const indexHtmlSha256 = sha256Of(indexHtml);
    if (indexHtmlSha256 == null)
        throw new Error(`Vite's renderer build wrote no ${indexHtml}`);
    fs.writeFileSync(stampFile, JSON.stringify({nodeEnv: "production", indexHtmlSha256} satisfies BuildStamp) + "\n");
    return {outDir, built: true};
}

function readStamp(file: string): BuildStamp | null {
    try {
        const stamp = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<BuildStamp> | null;
        return typeof stamp?.nodeEnv === "string" && typeof stamp.indexHtmlSha256 === "string" ? stamp as BuildStamp : null;
    } catch {
        return null;
    }
}

function sha256Of(file: string): string | null {
    try {
        return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    } catch {
        return null;
    }
}

function mtimeOf(file: string): number | null {
    try {
        return fs.statSync(file).mtimeMs;
    } catch {
        return null;
    }
}

function newestMtime(entry: string): number {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(entry);
    } catch {
        return 0;
    }
    if (!stat.isDirectory())
        return stat.mtimeMs;

    let newest = stat.mtimeMs;
    for (const child of fs.readdirSync(entry)) {
        if (child === "node_modules" || child.startsWith("."))
            continue;
        newest = Math.max(newest, newestMtime(path.join(entry, child)));
    }
    return newest;
}

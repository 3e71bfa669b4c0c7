import fs from "node:fs";
import path from "node:path";

export type RendererBuild = {outDir: string, built: boolean};

/** Inputs whose change makes the built renderer stale. */
const sourceEntries = ["renderer", "src/core/common", "vite.config.ts"];

/** Builds the renderer with Vite when its output is missing or older than any of its sources. */
export async function ensureRendererBuilt(repoRoot: string): Promise<RendererBuild> {
    const outDir = path.join(repoRoot, "dist", "renderer");
    const builtAt = mtimeOf(path.join(outDir, "index.html"));
    const newestSource = Math.max(...sourceEntries.map((entry) => newestMtime(path.join(repoRoot, entry))));
    if (builtAt != null && builtAt >= newestSource)
        return {outDir, built: false};

    const {build} = await import("vite");
    await build({configFile: path.join(repoRoot, "vite.config.ts"), logLevel: "warn"});
    return {outDir, built: true};
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

import {spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {buildCliBundle, cliBundleState} from "../../bin/cliBundle.mjs";
import {repoRoot} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * The packages a command loads when it runs; `--help` must not need any of them. node-llama-cpp's own JavaScript is bundled
 * (bin/cliBundle.mjs), so the clone keeps it for the build; its native binaries (`@node-llama-cpp/*`) are not there.
 */
const heavyPackages = new Set(["@node-llama-cpp", "better-sqlite3-multiple-ciphers", "openai", "ws"]);

/** The files of a build that `entry` loads before it runs: itself and the chunks it imports statically, transitively. */
function staticallyLoaded(buildDir: string, entry: string) {
    const loaded = new Set<string>();
    const visit = (file: string) => {
        if (loaded.has(file))
            return;
        loaded.add(file);
        const source = fs.readFileSync(path.join(buildDir, file), "utf8");
        for (const match of source.matchAll(/^(?:import|export)\b[^;]*?["']\.\/([^"']+\.mjs)["']/gm))
            visit(match[1]!);
    };
    visit(entry);
    return [...loaded];
}

/**
 * A clone of the project as `npm install` leaves it, minus the native and heavy packages: the
 * sources, bin/, package.json, and a node_modules of links to this checkout's packages. Without
 * `esbuild` when asked, as an install without dev dependencies.
 */
function cloneWithoutHeavyPackages({withEsbuild = true}: {withEsbuild?: boolean} = {}) {
    const root = tempDir("compiled-cli");
    for (const entry of ["src", "bin", "models", "package.json", "tsconfig.json"])
        fs.cpSync(path.join(repoRoot, entry), path.join(root, entry), {recursive: true});
    fs.mkdirSync(path.join(root, "node_modules"));
    for (const name of fs.readdirSync(path.join(repoRoot, "node_modules")))
        if (!heavyPackages.has(name) && (withEsbuild || name !== "esbuild"))
            fs.symlinkSync(path.join(repoRoot, "node_modules", name), path.join(root, "node_modules", name));
    return root;
}

/** `node bin/cleanroom.cjs …` with plain node: no tsx, no preload, the user's environment minus the pool setting. */
function runPlainNode(root: string, args: string[]) {
    const result = spawnSync(process.execPath, [path.join(root, "bin", "cleanroom.cjs"), ...args], {
        encoding: "utf8", env: {...process.env, UV_THREADPOOL_SIZE: undefined, NODE_OPTIONS: undefined}, timeout: 60_000 // a hang guard
    });
    return {code: result.status, stdout: result.stdout, stderr: result.stderr};
}

function editDescription(root: string, description: string) {
    const program = path.join(root, "src", "cli", "cleanroomProgram.ts");
    const source = fs.readFileSync(program, "utf8");
    const edited = source.replace(/description: "[^"]*"/, `description: ${JSON.stringify(description)}`);
    expect(edited).not.toBe(source);
    fs.writeFileSync(program, edited);
}

describe("the compiled CLI (bin/cleanroom.cjs)", () => {
    it("a fresh build runs `--help` and a command's help with plain node, loading no native or heavy package", async () => {
        const root = cloneWithoutHeavyPackages();
        expect(cliBundleState(root).state).toBe("missing");
        await buildCliBundle(root);
        expect(cliBundleState(root).state).toBe("fresh");

        const help = runPlainNode(root, ["--help"]);
        expect(help.stderr).toBe("");
        expect(help.code).toBe(0);
        expect(help.stdout).toMatch(/^Usage: cleanroom \[options\] \[command\]/);
        // Nor the bundled node-llama-cpp (esbuild marks where each bundled file begins: `// node_modules/node-llama-cpp/dist/index.js`):
        // a command imports the chunk that carries it when it runs.
        const state = cliBundleState(root);
        const buildDir = state.state === "fresh" ? state.dir : "";
        const helpFiles = staticallyLoaded(buildDir, "main.mjs");
        const bundled = (files: string[]) => files.filter((file) => /^\/\/ \S*node_modules\/node-llama-cpp\//m.test(fs.readFileSync(path.join(buildDir, file), "utf8")));
        expect(bundled(fs.readdirSync(buildDir).filter((file) => file.endsWith(".mjs")))).not.toEqual([]); // the check can see it
        expect(bundled(helpFiles)).toEqual([]);
        // node-llama-cpp's binary-test child, forked by every process that loads the model, is one file of its own: not the chunk of
        // all node-llama-cpp (1.8 MB), which it took 0.3 CPU-seconds a turn to load.
        const childFiles = staticallyLoaded(buildDir, "testBindingBinary.mjs");
        expect(childFiles).toEqual(["testBindingBinary.mjs"]);
        expect(fs.statSync(path.join(buildDir, "testBindingBinary.mjs")).size).toBeLessThan(200_000);
        for (const command of ["chat", "conversations", "selftest", "models"])
            expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));

        const chatHelp = runPlainNode(root, ["chat", "--help"]);
        expect(chatHelp.code).toBe(0);
        expect(chatHelp.stdout).toContain("--max-tokens <n>");

        // A command that needs one of them says what is missing, with a non-zero exit.
        const list = runPlainNode(root, ["conversations", "list", "--db", path.join(root, "x.db")]);
        expect(list.code).not.toBe(0);
        expect(list.stderr).toContain("better-sqlite3-multiple-ciphers");
    });

    it("rebuilds itself first when a source changed since the build", async () => {
        const root = cloneWithoutHeavyPackages();
        await buildCliBundle(root);
        editDescription(root, "Edited after the build");
        expect(cliBundleState(root)).toMatchObject({state: "stale", reason: "src/cli/cleanroomProgram.ts changed"});

        const help = runPlainNode(root, ["--help"]);
        expect(help.code).toBe(0);
        expect(help.stdout).toContain("Edited after the build");
        expect(cliBundleState(root).state).toBe("fresh");
    });

    it("refuses to run a stale build it cannot rebuild, saying why and what to do", async () => {
        const root = cloneWithoutHeavyPackages();
        await buildCliBundle(root);
        fs.rmSync(path.join(root, "node_modules", "esbuild"));
        editDescription(root, "Edited where esbuild is missing");

        const help = runPlainNode(root, ["--help"]);
        expect(help.code).toBe(1);
        expect(help.stdout).toBe("");
        expect(help.stderr).toBe("cleanroom: The compiled CLI cannot run: src/cli/cleanroomProgram.ts changed, and it cannot be rebuilt here: " +
            "esbuild is not installed (a dev dependency): run `npm install` in the project folder. [CLI_BUNDLE_STALE]\n");

        // A file whose time stamp moved but whose content is the same (a checkout) is not a change.
        const clean = cloneWithoutHeavyPackages({withEsbuild: true});
        await buildCliBundle(clean);
        const main = path.join(clean, "src", "cli", "main.ts");
        fs.utimesSync(main, new Date(), new Date(Date.now() + 60_000));
        expect(cliBundleState(clean).state).toBe("fresh");
    });
});

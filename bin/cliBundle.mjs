// The compiled CLI and web mode: src/cli/main.ts, web mode's server and core process, and
// `npm start`, bundled by esbuild in one build into out/cli/<build id>/, ESM, split at every
// dynamic import and between entries so that a command loads only what it needs (`--help` loads no
// native module) and web mode's two processes share one copy of each module; beside them, built
// apart, node-llama-cpp's binary-test child in one small file (`bindingTestChild`). Plain JavaScript, so
// that plain `node` can check and rebuild the bundle before anything is compiled. Built by
// `npm install` (package.json "prepare") and again by the launchers (bin/cleanroom.cjs, bin/web.mjs,
// bin/start.mjs) when a source file changed since. Types: cliBundle.d.mts.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const manifestVersion = 2;
/**
 * Each entry becomes `<name>.mjs` in the build folder. WebCoreProcess forks `webCoreEntry.mjs` beside
 * its own chunk, and a preload given to web mode reaches the core process too (fork inherits execArgv).
 */
const entryPoints = {
    main: "src/cli/main.ts",
    web: "src/web/main.ts",
    webCoreEntry: "src/web/webCoreEntry.ts",
    start: "src/launch/start.ts"
};
/**
 * node-llama-cpp forks this file of its own before it loads a binary (it tests the binary in a child): the module must be
 * a file named testBindingBinary (see nodeModulesAtHome). It is built apart, in one file with only what the child runs:
 * as an entry of the split build it loaded the chunk of all node-llama-cpp (1.8 MB, about 0.15 CPU-seconds to compile
 * and run) to reach the few functions the child calls, in every process that loads the model.
 */
const bindingTestChild = {testBindingBinary: "node_modules/node-llama-cpp/dist/bindings/utils/testBindingBinary.js"};
/**
 * The bundle users run. Another (a test build with modules of its own compiled beside these, sharing
 * their chunks, so that a preload patches the very classes the entries use) names its own folder in out/.
 * @type {BundleVariant}
 */
export const cliBundle = {folder: "cli", extraEntries: {}};
/**
 * Bundled: what `--help` itself needs, unhomoglyph's table of look-alike letters (a JSON file,
 * src/core/common/cloud/foldLetter.ts: bundled, it needs no import attribute, which Node before 20.10
 * cannot parse), and node-llama-cpp with the packages it imports: about 720 module files, whose loading
 * cost Node 20 about 0.5 CPU-seconds in every process that runs the model (and again in node-llama-cpp's
 * binary-test child), against about 0.15 for the same code in a few chunks. Every other package stays in
 * node_modules, loaded when a command imports it.
 */
const bundledPackages = new Set(["commander", "zod", "unhomoglyph", "node-llama-cpp"]);
/** Packages with native binaries that bundled packages import: they stay in node_modules, where their `.node` files are. */
const nativePackages = ["@node-llama-cpp/*", "@reflink/*"];
/** An older build is removed once it is this old: a process that started on it may still load its chunks. */
const oldBuildGraceMs = 60 * 60 * 1000;

/** The bundle is missing or older than its sources, and cannot be rebuilt here. */
export class CliBundleError extends Error {
    /** @param {string} message @param {"CLI_BUNDLE_STALE" | "CLI_BUNDLE_BUILD_FAILED"} code */
    constructor(message, code) {
        super(message);
        this.name = "CliBundleError";
        this.code = code;
    }
}

/** @typedef {{folder: string, extraEntries: Record<string, string>}} BundleVariant */

/** @param {string} root @param {BundleVariant} variant */
function paths(root, variant) {
    const outDir = path.join(root, "out", variant.folder);
    return {outDir, manifest: path.join(outDir, "current.json")};
}

/** @param {BundleVariant} variant */
function entryNames(variant) {
    return Object.keys({...entryPoints, ...bindingTestChild, ...variant.extraEntries}).sort();
}

/** @param {string} file */
function sha256(file) {
    return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** @param {string} root @param {BundleVariant} variant */
function readManifest(root, variant) {
    try {
        const manifest = JSON.parse(fs.readFileSync(paths(root, variant).manifest, "utf8"));
        return manifest?.version === manifestVersion ? manifest : null;
    } catch {
        return null;
    }
}

/**
 * Whether the bundle in out/cli was built from the sources as they are now: every input file
 * (sources, the bundled packages' package.json, package.json, this file) has the recorded size
 * and, where its time stamp moved, the recorded SHA-256; and it has every entry asked for.
 * @param {string} [root]
 * @param {BundleVariant} [variant]
 * @returns {{state: "fresh", entry: string, dir: string} | {state: "missing" | "stale", reason: string}}
 */
export function cliBundleState(root = repoRoot, variant = cliBundle) {
    const manifest = readManifest(root, variant);
    if (manifest == null)
        return {state: "missing", reason: "the CLI has not been built"};
    const entry = path.join(paths(root, variant).outDir, manifest.entry);
    if (!fs.existsSync(entry))
        return {state: "missing", reason: `${path.relative(root, entry)} is missing`};
    if (JSON.stringify(manifest.entries) !== JSON.stringify(entryNames(variant)))
        return {state: "stale", reason: "its entry points changed"};
    for (const [file, recorded] of Object.entries(manifest.inputs)) {
        const absolute = path.join(root, file);
        let stat;
        try {
            stat = fs.statSync(absolute);
        } catch {
            return {state: "stale", reason: `${file} is gone`};
        }
        if (stat.size !== recorded.size || (stat.mtimeMs !== recorded.mtimeMs && sha256(absolute) !== recorded.sha256))
            return {state: "stale", reason: `${file} changed`};
    }
    return {state: "fresh", entry, dir: path.dirname(entry)};
}

/** @param {string} root @param {string} input an esbuild metafile input path, relative to root */
function recordedInput(root, input) {
    const parts = input.split("/");
    const at = parts.lastIndexOf("node_modules");
    if (at < 0)
        return input;
    // A bundled package is known by its version, not by each of its files.
    const packageParts = parts[at + 1]?.startsWith("@") ? 2 : 1;
    return [...parts.slice(0, at + 1 + packageParts), "package.json"].join("/");
}

/**
 * Bundles the CLI into out/cli/<build id>/ and points out/cli/current.json at it. Safe to run in
 * several processes at once: each builds in a folder of its own and the same sources give the
 * same build id, so the loser of the final rename just discards its copy.
 * @param {string} [root]
 * @param {BundleVariant} [variant]
 * @returns {Promise<string>} the CLI's entry file (main.mjs); the other entries are beside it
 */
export async function buildCliBundle(root = repoRoot, variant = cliBundle) {
    let esbuild;
    try {
        esbuild = await import(pathToFileURL(path.join(root, "node_modules", "esbuild", "lib", "main.js")).href);
    } catch {
        throw new CliBundleError("esbuild is not installed (a dev dependency): run `npm install` in the project folder.", "CLI_BUNDLE_STALE");
    }
    const {outDir, manifest: manifestPath} = paths(root, variant);
    fs.mkdirSync(outDir, {recursive: true});
    const staging = fs.mkdtempSync(path.join(outDir, ".build-"));
    fs.chmodSync(staging, 0o755); // readable like the rest of the checkout (mkdtemp makes it private)
    try {
        const packageJson = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
        const external = Object.keys({...packageJson.dependencies, ...packageJson.devDependencies}).filter((name) => !bundledPackages.has(name));
        const options = {
            absWorkingDir: root,
            outdir: staging,
            outExtension: {".js": ".mjs"},
            bundle: true,
            format: "esm",
            platform: "node",
            target: "node20",
            external: [...external.flatMap((name) => [name, `${name}/*`]), ...nativePackages, "*.node"],
            metafile: true,
            logLevel: "silent",
            // A bundled CommonJS package (commander) calls require: give the ES module one.
            banner: {js: "import {createRequire as __cleanroomCreateRequire} from \"node:module\"; const require = __cleanroomCreateRequire(import.meta.url);"}
        };
        const inputFiles = new Set();
        try {
            const builds = await Promise.all([
                esbuild.build({
                    ...options,
                    entryPoints: {...entryPoints, ...variant.extraEntries},
                    chunkNames: "chunk-[hash]",
                    splitting: true,
                    plugins: [nodeModulesAtHome(staging, [rememberBindingTests(root)])]
                }),
                esbuild.build({...options, entryPoints: bindingTestChild, plugins: [nodeModulesAtHome(staging), onlyWhatIsUsed()]})
            ]);
            for (const result of builds)
                Object.keys(result.metafile.inputs).forEach((input) => inputFiles.add(input));
        } catch (error) {
            const details = (error.errors ?? []).slice(0, 5).map((item) => `${item.location?.file ?? ""}:${item.location?.line ?? ""} ${item.text}`).join("\n  ");
            throw new CliBundleError(`The CLI could not be compiled${details !== "" ? `:\n  ${details}` : `: ${error.message}`}`, "CLI_BUNDLE_BUILD_FAILED");
        }

        const inputs = {};
        for (const input of [...inputFiles, "package.json", "bin/cliBundle.mjs"]) {
            const file = recordedInput(root, input);
            if (inputs[file] != null)
                continue;
            const absolute = path.join(root, file);
            const stat = fs.statSync(absolute);
            inputs[file] = {size: stat.size, mtimeMs: stat.mtimeMs, sha256: sha256(absolute)};
        }
        const sorted = Object.fromEntries(Object.entries(inputs).sort(([left], [right]) => left.localeCompare(right)));
        // The entries too: a new entry whose module was already an input changes no input, and a build of the old
        // entries under the same name would otherwise be taken for this one (see the rename below).
        const buildId = crypto.createHash("sha256")
            .update(JSON.stringify({esbuild: esbuild.version, entries: entryNames(variant), inputs: Object.entries(sorted).map(([file, input]) => [file, input.sha256])}))
            .digest("hex").slice(0, 16);

        const buildDir = path.join(outDir, buildId);
        try {
            fs.renameSync(staging, buildDir);
        } catch (error) {
            if (!fs.existsSync(path.join(buildDir, "main.mjs")))
                throw error;
            // Another process built the same sources first.
        }
        const manifest = {version: manifestVersion, buildId, entry: `${buildId}/main.mjs`, entries: entryNames(variant), builtAt: new Date().toISOString(), esbuild: esbuild.version, inputs: sorted};
        const temporary = `${manifestPath}.${process.pid}.tmp`;
        fs.writeFileSync(temporary, JSON.stringify(manifest, null, 2) + "\n");
        fs.renameSync(temporary, manifestPath);
        removeOldBuilds(outDir, buildId);
        return path.join(buildDir, "main.mjs");
    } finally {
        fs.rmSync(staging, {recursive: true, force: true});
    }
}

/** @typedef {(file: string, source: string) => string} PackageSourceChange */

/**
 * A bundled package that finds its own files (node-llama-cpp: its llama.cpp binaries, its package.json;
 * ipull: its package.json) does so from `import.meta.url`: in a bundled module that becomes the module's
 * original file again, relative to the build folder (out/<variant>/<build id>/, beside node_modules' root).
 * Except in node-llama-cpp's testBindingBinary.js, which forks its own file: that is the entry of the same name.
 * `changes` rewrite a package module's source first (esbuild gives a file to one plugin's onLoad only).
 * @param {string} staging the build folder, at the depth of the final one
 * @param {PackageSourceChange[]} [changes]
 * @returns {import("esbuild").Plugin}
 */
function nodeModulesAtHome(staging, changes = []) {
    return {
        name: "node-modules-at-home",
        setup(build) {
            build.onLoad({filter: /[\\/]node_modules[\\/].*\.js$/}, async (args) => {
                const original = await fs.promises.readFile(args.path, "utf8");
                const source = changes.reduce((text, change) => change(args.path, text), original);
                if (!source.includes("import.meta.url"))
                    return source === original ? undefined : {contents: source, loader: "js"};
                const home = path.basename(args.path) === "testBindingBinary.js"
                    ? "./testBindingBinary.mjs"
                    : path.relative(staging, args.path).split(path.sep).join("/");
                return {contents: source.replaceAll("import.meta.url", `new URL(${JSON.stringify(home)}, import.meta.url).href`), loader: "js"};
            });
        }
    };
}

const bindingTestImport = "import { testBindingBinary } from \"./utils/testBindingBinary.js\";";

/**
 * node-llama-cpp tests a prebuilt binary in a child process before every load on Linux; in the bundle, getLlama.js asks
 * src/core/node/engine/bindingTestMemory.ts instead, which runs that same test only when this machine has not passed it
 * for the same binary before. The build fails, saying so, when node-llama-cpp no longer imports the test as expected.
 * @param {string} root
 * @returns {PackageSourceChange}
 */
function rememberBindingTests(root) {
    const memory = path.join(root, "src", "core", "node", "engine", "bindingTestMemory.ts");
    return (file, source) => {
        if (!/[\\/]node-llama-cpp[\\/]dist[\\/]bindings[\\/]getLlama\.js$/.test(file))
            return source;
        if (!source.includes(bindingTestImport))
            throw new Error(`${file} no longer has the line ${bindingTestImport} (bin/cliBundle.mjs, rememberBindingTests): see how this node-llama-cpp tests its binaries`);
        return source.replace(bindingTestImport, [
            "import { testBindingBinary as testBindingBinaryInChild } from \"./utils/testBindingBinary.js\";",
            `import { rememberedBindingTest } from ${JSON.stringify(memory)};`,
            "const testBindingBinary = (bindingPath, extBackendsPath, gpu, ...rest) => rememberedBindingTest({bindingPath, extBackendsPath, gpu}, " +
                "() => testBindingBinaryInChild(bindingPath, extBackendsPath, gpu, ...rest));"
        ].join("\n"));
    };
}

/**
 * Marks the package modules that package modules import by relative path (node-llama-cpp's own, about 700) as free of
 * side effects on import, so that esbuild leaves out each one whose exports go unused: node-llama-cpp's modules import
 * most of the package, for what the binary-test child never runs. The child's file is then about 53 KB, not the 880 KB
 * of everything its imports reach. Only for that one-file build, whose entry's own top-level code (the child's message
 * handler) esbuild always keeps. The path is joined here rather than resolved through esbuild again (an ES module names
 * its relative imports' files in full): a nested `build.resolve` per import made the build 1.2 s instead of 0.2.
 * @returns {import("esbuild").Plugin}
 */
function onlyWhatIsUsed() {
    return {
        name: "only-what-is-used",
        setup(build) {
            build.onResolve({filter: /^\.\.?\/.*\.js$/}, (args) => /[\\/]node_modules[\\/]/.test(args.importer)
                ? {path: path.join(args.resolveDir, args.path), sideEffects: false}
                : undefined);
        }
    };
}

/** @param {string} outDir @param {string} current */
function removeOldBuilds(outDir, current) {
    for (const name of fs.readdirSync(outDir)) {
        const folder = path.join(outDir, name);
        try {
            if (name !== current && fs.statSync(folder).isDirectory() && Date.now() - fs.statSync(folder).mtimeMs > oldBuildGraceMs)
                fs.rmSync(folder, {recursive: true, force: true});
        } catch {
            // Removed by another process meanwhile.
        }
    }
}

/**
 * The entry of a bundle built from the current sources: the existing one, else a new build.
 * `onRebuild` hears why a build is needed before it starts.
 * @param {{root?: string, variant?: BundleVariant, onRebuild?: (reason: string) => void}} [options]
 * @returns {Promise<string>} the CLI's entry file (main.mjs); the other entries are beside it
 */
export async function freshCliBundle({root = repoRoot, variant = cliBundle, onRebuild} = {}) {
    const state = cliBundleState(root, variant);
    if (state.state === "fresh")
        return state.entry;
    onRebuild?.(state.reason);
    try {
        return await buildCliBundle(root, variant);
    } catch (error) {
        if (error instanceof CliBundleError && error.code === "CLI_BUNDLE_STALE")
            throw new CliBundleError(`The compiled CLI cannot run: ${state.reason}, and it cannot be rebuilt here: ${error.message}`, "CLI_BUNDLE_STALE");
        throw error;
    }
}

/**
 * What the launchers do (bin/cleanroom.cjs, bin/web.mjs, bin/start.mjs): runs the bundle's entry
 * `name` in this process, built first when a source changed since. On a failure it says why on
 * stderr, each line after `command: `, and exits with status 1.
 * @param {string} name
 * @param {string} command
 * @param {() => void} [onChecked] called once the bundle is known fresh, before the entry loads
 */
export async function runBundleEntry(name, command, onChecked) {
    let entry;
    try {
        const main = await freshCliBundle({
            onRebuild: (reason) => {
                if (process.stderr.isTTY)
                    process.stderr.write(`${command}: compiling (${reason})...\n`);
            }
        });
        entry = path.join(path.dirname(main), `${name}.mjs`);
    } catch (error) {
        process.stderr.write(`${command}: ${error.message}${error.code != null ? ` [${error.code}]` : ""}\n`);
        process.exit(1);
    }
    onChecked?.();
    await import(pathToFileURL(entry).href);
}

// `node bin/cliBundle.mjs`: build (npm's "prepare"), or with --check report whether a build is needed.
if (process.argv[1] != null && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    try {
        if (process.argv.includes("--check")) {
            const state = cliBundleState();
            process.stdout.write(state.state === "fresh" ? "The compiled CLI is up to date.\n" : `The compiled CLI needs a build: ${state.reason}.\n`);
            process.exitCode = state.state === "fresh" ? 0 : 1;
        } else {
            const started = performance.now();
            const entry = await buildCliBundle();
            process.stdout.write(`Compiled the CLI: ${path.relative(repoRoot, entry)} (${((performance.now() - started) / 1000).toFixed(1)} s).\n`);
        }
    } catch (error) {
        process.stderr.write(`cleanroom: ${error.message}\n`);
        process.exitCode = 1;
    }
}

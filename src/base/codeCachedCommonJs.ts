import {isAscii} from "node:buffer";
import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {pathToFileURL} from "node:url";
import vm from "node:vm";

/**
 * Runs a CommonJS file as `require` would, but compiled through a V8 code cache kept beside it
 * (`<file>.<node version>.v8cache`), which Node 20 keeps for no module of its own: the compiled CLI's
 * node-llama-cpp (bin/cliBundle.mjs), about 2 MB of JavaScript that every process running the model
 * loads. The first process to find no cache writes it as it exits, so that it holds the functions that
 * process ran, compiled (a chat turn: 0.72 -> 0.69 CPU-seconds, 20 alternating pairs; made before the
 * top level ran it saved less); later ones compile from it. A cache V8 rejects (another Node, other V8
 * flags) only costs the compile it would have saved, and is left for the processes it fits. Where the
 * folder is read-only the file just compiles every time. V8 checks a cache against its source's length
 * only, not its text: the file must never change in place (the bundle's folder is named by its
 * sources' hash, so a new build is a new file with no cache); an edit of the same length would run
 * the cached functions of the old text.
 *
 * Beside CommonJS's `exports`, `require`, `module`, `__filename` and `__dirname`, its code sees, under
 * names no bundled module declares (esbuild renames theirs, not these): `__cleanroomFileUrl`, its own
 * file URL, and `__cleanroomImport`, to use instead of `import()`: on Node 20 a script compiled from a
 * code cache has no way to Node's loader (its `import()` fails, "A dynamic import callback was not
 * specified"), and the way `vm` offers prints an experimental-feature warning.
 * @param importModule `import()` as the caller's module does it (bare names resolve from there)
 * @returns the file's `module.exports`, and whether a cache was `used`, `rejected` (left as it is) or is to be `written`
 */
export function loadCodeCachedCommonJs(file: string, importModule: (specifier: string) => Promise<unknown>, {
    writeCache = (write) => process.once("exit", write)
}: CodeCacheOptions = {}): {exports: unknown, codeCache: "used" | "rejected" | "written"} {
    const cacheFile = `${file}.${process.version}.v8cache`;
    const source = readSource(file);
    const cachedData = readIfPresent(cacheFile);
    const wrapped = `(function (exports, require, module, __filename, __dirname, __cleanroomFileUrl, __cleanroomImport) { ${source}\n});`;
    const script = new vm.Script(wrapped, {
        filename: file,
        cachedData
    });
    const moduleObject = {exports: {} as unknown, filename: file, id: file, loaded: false};
    const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: object, filename: string, dirname: string, fileUrl: string, importModule: (specifier: string) => Promise<unknown>) => void;
    wrapper.call(moduleObject.exports, moduleObject.exports, createRequire(file), moduleObject, file, path.dirname(file), pathToFileURL(file).href, importModule);
    moduleObject.loaded = true;
    if (cachedData == null)
        writeCache(() => writeQuietly(cacheFile, script.createCachedData()));
    return {exports: moduleObject.exports, codeCache: cachedData == null ? "written" : script.cachedDataRejected === true ? "rejected" : "used"};
}

export type CodeCacheOptions = {
    /** When the cache is written, given the writing: by default as the process exits (see `loadCodeCachedCommonJs`). */
    writeCache?: (write: () => void) => void
};

/**
 * The file's text: an ASCII file (esbuild's output escapes every other character) read as Latin-1, the same string, made
 * faster than by Node 20's UTF-8 decoding (node-llama-cpp's 2 MB in a fresh process: 15 against 24 CPU-ms, 12 of each).
 */
function readSource(file: string): string {
    const bytes = fs.readFileSync(file);
    return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

function readIfPresent(file: string): Buffer | undefined {
    try {
        return fs.readFileSync(file);
    } catch {
        return undefined;
    }
}

/** Whole or not at all (another process may be reading it), and never an error: it is only a cache. */
function writeQuietly(file: string, data: Buffer) {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
        fs.writeFileSync(temporary, data);
        fs.renameSync(temporary, file);
    } catch {
        fs.rmSync(temporary, {force: true});
    }
}

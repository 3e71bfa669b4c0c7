import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {describe, expect, it} from "vitest";
import {loadCodeCachedCommonJs} from "../../src/base/codeCachedCommonJs.js";
import {tempDir} from "../helpers/tempCore.js";

/** How the compiled CLI loads node-llama-cpp (bin/cliBundle.mjs): a CommonJS file compiled through a V8 code cache beside it. */
const writeNow = {writeCache: (write: () => void) => write()};
const importHere = (specifier: string) => import(specifier);

function commonJsFile(source: string) {
    const file = path.join(tempDir("code-cache"), "module.cjs");
    fs.writeFileSync(file, source);
    return file;
}

const cacheOf = (file: string) => `${file}.${process.version}.v8cache`;

describe("loadCodeCachedCommonJs", () => {
    it("writes the cache on a first load and compiles from it on the next, with the same exports", () => {
        const file = commonJsFile("exports.greet = (name) => `hello ${name}`;\nexports.loadedFrom = __filename;\n");
        const first = loadCodeCachedCommonJs(file, importHere, writeNow);
        expect(first.codeCache).toBe("written");
        expect(fs.statSync(cacheOf(file)).size).toBeGreaterThan(0);

        const second = loadCodeCachedCommonJs(file, importHere, writeNow);
        expect(second.codeCache).toBe("used");
        const exports = second.exports as {greet(name: string): string, loadedFrom: string};
        expect(exports.greet("cache")).toBe("hello cache");
        expect(exports.loadedFrom).toBe(file);
    });

    it("a damaged cache (garbage, or another Node's) is left as it is and the file still loads, compiled afresh", () => {
        const file = commonJsFile("module.exports = {answer: 42};\n");
        fs.writeFileSync(cacheOf(file), Buffer.from("not a V8 code cache at all"));
        const loaded = loadCodeCachedCommonJs(file, importHere, writeNow);
        expect(loaded.codeCache).toBe("rejected");
        expect(loaded.exports).toEqual({answer: 42});
        expect(fs.readFileSync(cacheOf(file), "utf8")).toBe("not a V8 code cache at all");
    });

    it("reads a file with characters beyond ASCII as UTF-8", () => {
        const file = commonJsFile("module.exports = \"Grüße, 世界, 🙂\";\n");
        expect(loadCodeCachedCommonJs(file, importHere, writeNow).exports).toBe("Grüße, 世界, 🙂");
    });

    it("gives the file its own URL, a require from its folder, and the caller's import for what it imports dynamically", async () => {
        const file = commonJsFile([
            "exports.url = __cleanroomFileUrl;",
            "exports.sibling = require('./sibling.cjs');",
            "exports.importPath = () => __cleanroomImport('node:path');"
        ].join("\n"));
        fs.writeFileSync(path.join(path.dirname(file), "sibling.cjs"), "module.exports = 'beside it';\n");
        const exports = loadCodeCachedCommonJs(file, importHere, writeNow).exports as {url: string, sibling: string, importPath(): Promise<{sep: string}>};
        expect(exports.url).toBe(pathToFileURL(file).href);
        expect(exports.sibling).toBe("beside it");
        expect((await exports.importPath()).sep).toBe(path.sep);
    });

    it("where the cache cannot be written (as in a read-only install), loads the file all the same and leaves nothing behind", () => {
        const file = commonJsFile("module.exports = 'still here';\n");
        // A folder where the cache file would go, so that the write fails even as root (for whom no folder is read-only).
        fs.mkdirSync(cacheOf(file));
        const loaded = loadCodeCachedCommonJs(file, importHere, writeNow);
        expect(loaded.exports).toBe("still here");
        expect(fs.statSync(cacheOf(file)).isDirectory()).toBe(true);
        expect(fs.readdirSync(path.dirname(file)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    });
});

import fs from "node:fs";
import path from "node:path";

/** Libraries of a llama.cpp binary folder that carry the compiler's `.comment` (the small ones first). */
const candidates = ["libggml-base.so", "libggml-base.dylib", "llama-addon.node"];
const compilerPattern = /GCC: \([^)\n]{0,200}\) [\d.]+|(?:Debian |Ubuntu |Apple )?clang version [\d.]+/;

/**
 * What each library said, by path, with the file's identity when read: `engine.status` asks on every call, and reading a
 * library (a megabyte or more) to find one line took milliseconds each time; a rebuilt or replaced file is read again.
 */
const readBefore = new Map<string, {identity: string, compiler: string | null}>();

/**
 * The compiler a llama.cpp binary folder was built with, as its ELF `.comment` names it
 * (`GCC: (Ubuntu 11.4.0-1ubuntu1~22.04.3) 11.4.0`), or `null` when no library says.
 */
export function readBinaryCompiler(binaryDirectory: string): string | null {
    for (const name of candidates) {
        const file = path.join(binaryDirectory, name);
        const stats = fs.statSync(file, {throwIfNoEntry: false, bigint: true});
        if (stats == null || !stats.isFile())
            continue;
        const identity = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
        let known = readBefore.get(file);
        if (known?.identity !== identity) {
            let bytes: Buffer;
            try {
                bytes = fs.readFileSync(file);
            } catch {
                continue;
            }
            known = {identity, compiler: compilerPattern.exec(bytes.toString("latin1"))?.[0] ?? null};
            readBefore.set(file, known);
        }
        if (known.compiler != null)
            return known.compiler;
    }
    return null;
}

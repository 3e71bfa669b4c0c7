import fs from "node:fs";
import path from "node:path";

/** Libraries of a llama.cpp binary folder that carry the compiler's `.comment` (the small ones first). */
const candidates = ["libggml-base.so", "libggml-base.dylib", "llama-addon.node"];
const compilerPattern = /GCC: \([^)\n]{0,200}\) [\d.]+|(?:Debian |Ubuntu |Apple )?clang version [\d.]+/;

/**
 * The compiler a llama.cpp binary folder was built with, as its ELF `.comment` names it
 * (`GCC: (Ubuntu 11.4.0-1ubuntu1~22.04.3) 11.4.0`), or `null` when no library says.
 */
export function readBinaryCompiler(binaryDirectory: string): string | null {
    for (const name of candidates) {
        let bytes: Buffer;
        try {
            bytes = fs.readFileSync(path.join(binaryDirectory, name));
        } catch {
            continue;
        }
        const match = compilerPattern.exec(bytes.toString("latin1"));
        if (match != null)
            return match[0];
    }
    return null;
}

import fs from "node:fs";
import path from "node:path";

/** A tool the llama.cpp build needs, found or not, and the Debian package that provides it. */
export type LlamaBuildTool = {
    tool: "cmake" | "C++ compiler" | "make",
    /** Its path, `null` when not found. */
    path: string | null,
    debianPackage: string
};

/**
 * cmake, a C++ compiler (`$CXX`, else c++, g++ or clang++) and make, looked up on `PATH` as
 * node-llama-cpp's build (cmake-js, Unix Makefiles) would find them.
 */
export function findLlamaBuildTools(env: NodeJS.ProcessEnv = process.env): LlamaBuildTool[] {
    const dirs = (env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
    const find = (...names: string[]) => {
        for (const name of names) {
            const found = path.isAbsolute(name) ? (isExecutable(name) ? name : null) : dirs.map((dir) => path.join(dir, name)).find(isExecutable) ?? null;
            if (found != null)
                return found;
        }
        return null;
    };
    const cxx = env.CXX != null && env.CXX !== "" ? [env.CXX.split(" ")[0]!] : [];
    return [
        {tool: "cmake", path: find("cmake"), debianPackage: "cmake"},
        {tool: "C++ compiler", path: find(...cxx, "c++", "g++", "clang++"), debianPackage: "g++"},
        {tool: "make", path: find("make"), debianPackage: "make"}
    ];
}

function isExecutable(file: string) {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

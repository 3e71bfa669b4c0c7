// A stand-in for node-llama-cpp's `source download` build (which takes 10 minutes and writes into
// node_modules), run by `buildLocalLlama` when CLEANROOM_LLAMA_BUILD_STAND_IN names this file.
// It writes what node-llama-cpp would into CLEANROOM_LLAMA_LOCAL_BUILDS, with its kinds of output
// lines, and `buildDone.status` last. STAND_IN_MODE: `finish` (default), `hang` (stops at 50% with a
// "compiler" child running, whose pid goes to STAND_IN_PID_FILE, until killed), `diskfull`, `fail`.
import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const mode = process.env.STAND_IN_MODE ?? "finish";
const builds = process.env.CLEANROOM_LLAMA_LOCAL_BUILDS;
const options = Object.fromEntries(Object.entries(process.env)
    .filter(([name]) => name.startsWith("NODE_LLAMA_CPP_CMAKE_OPTION_"))
    .map(([name, value]) => [name.slice("NODE_LLAMA_CPP_CMAKE_OPTION_".length), value]));
const directory = path.join(builds, "linux-x64-stand-in");
const release = path.join(directory, "Release");

console.log("Repo: ggml-org/llama.cpp");
console.log("Cloning llama.cpp");
fs.rmSync(directory, {recursive: true, force: true});
fs.mkdirSync(release, {recursive: true});
console.log("\u001b[34mCompiling llama.cpp\u001b[39m");
for (const percent of [3, 25, 50]) {
    console.log(`[ ${String(percent).padStart(2)}%] Building CXX object ggml/src/step-${percent}.cpp.o`);
}
fs.writeFileSync(path.join(release, "libggml-base.so"), "\u007fELF stand-in\0GCC: (Stand-in 1.0) 1.0\0");
fs.writeFileSync(path.join(release, "llama-addon.node"), "\u007fELF stand-in");
fs.writeFileSync(path.join(release, "_nlcBuildMetadata.json"), JSON.stringify({buildOptions: {customCmakeOptions: options, gpu: false}}));
if (mode === "hang") {
    const compiler = spawn(process.execPath, ["-e", "setInterval(() => undefined, 1000)"], {stdio: "ignore"});
    fs.writeFileSync(process.env.STAND_IN_PID_FILE, String(compiler.pid));
    console.log("[ 51%] Building CXX object ggml/src/ggml-cpu/ggml-cpu.cpp.o");
} else if (mode === "diskfull") {
    console.error("/usr/bin/ld: final link failed: No space left on device");
    process.exit(1);
} else if (mode === "fail") {
    console.error("ggml.c:1:1: error: stand-in failure");
    process.exit(2);
} else {
    console.log("[120/240] Building CXX object src/llama.cpp.o");
    console.log("[240/240] Linking CXX shared library libllama.so");
    fs.writeFileSync(path.join(directory, "buildDone.status"), "");
    console.log("Compiled llama.cpp");
}

/**
 * Builds node-llama-cpp's bundled llama.cpp source for this machine's CPU, with OpenMP, into
 * node_modules/node-llama-cpp/llama/localBuilds (about 9-12 minutes on 2 cores; needs cmake and a
 * C++ compiler). Optional: without it Cleanroom runs node-llama-cpp's prebuilt binary. With it,
 * `loadLlama` finds this build and uses it, and thread counts are measured again for it.
 * See docs/threads.md for why. `npm ci` removes the build; run this again after.
 *
 *   npm run build:llama
 */
import {spawnSync} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {localLlamaBuildCmakeOptions} from "../src/core/node/engine/localLlamaBuild.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = path.join(repoRoot, "node_modules", "node-llama-cpp", "dist", "cli", "cli.js");
// node-llama-cpp reads custom CMake options from NODE_LLAMA_CPP_CMAKE_OPTION_<name>, and names the build folder after them.
const env: NodeJS.ProcessEnv = {...process.env};
for (const [name, value] of Object.entries(localLlamaBuildCmakeOptions))
    env[`NODE_LLAMA_CPP_CMAKE_OPTION_${name}`] = value;

// `source download` clones the release node-llama-cpp ships as a git bundle (no network), then builds it.
const result = spawnSync(process.execPath, [cli, "source", "download", "--gpu", "false", "--noUsageExample"], {cwd: repoRoot, env, stdio: "inherit"});
process.exit(result.status ?? 1);

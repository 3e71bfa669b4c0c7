import {getLlama, LlamaLogLevel, type Llama} from "node-llama-cpp";
import {localLlamaBuildCmakeOptions} from "./localLlamaBuild.js";

let shared: Promise<Llama> | null = null;

/**
 * The process's one `Llama` (the native backend). CPU only by default: this build is what
 * the tests run, and a GPU can be enabled with CLEANROOM_GPU=auto. A CPU build made by
 * `npm run build:llama` (OpenMP threads) is used when present, else the prebuilt binary;
 * CLEANROOM_LLAMA_BUILD=prebuilt keeps the prebuilt binary even then.
 */
export function loadLlama(): Promise<Llama> {
    shared ??= getLlama({
        gpu: process.env.CLEANROOM_GPU === "auto" ? "auto" : false,
        build: "never",
        // Only picks the local build: with none there, the prebuilt binary is used as before.
        cmakeOptions: process.env.CLEANROOM_LLAMA_BUILD === "prebuilt" ? {} : localLlamaBuildCmakeOptions,
        logLevel: LlamaLogLevel.error,
        // llama.cpp reports bad states through the log as well as return codes; errors alone are kept.
        logger(level, message) {
            if (level === LlamaLogLevel.error && process.env.CLEANROOM_DEBUG === "1")
                process.stderr.write(`[llama.cpp] ${message}\n`);
        }
    });
    return shared;
}

/**
 * The CMake options of the optional CPU build `npm run build:llama` makes (scripts/build-llama.ts):
 * node-llama-cpp keeps it under a folder named after them, and `getLlama` with the same options
 * finds it there, or falls back to the prebuilt binary. OpenMP keeps one thread team alive across
 * decodes; the prebuilt binary (built without it) starts fresh threads for every decode.
 */
export const localLlamaBuildCmakeOptions: Readonly<Record<string, string>> = Object.freeze({GGML_OPENMP: "ON"});

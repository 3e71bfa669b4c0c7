import type {Llama} from "node-llama-cpp";

/**
 * Which llama.cpp binary the process runs, in one short stable string such as
 * `prebuilt v0.4.0 cpu` or `local v0.4.0 cpu openmp` (a build made by `npm run build:llama`).
 * Thread tunings are stored per build: what is fastest on one is not on the other.
 */
export function describeLlamaBuild(llama: Llama) {
    const openmp = llama.cmakeOptions.GGML_OPENMP;
    return [
        llama.buildType === "localBuild" ? "local" : "prebuilt",
        llama.llamaCppRelease.release,
        llama.gpu === false ? "cpu" : llama.gpu,
        ...(llama.buildType === "localBuild" && openmp != null && openmp !== "OFF" ? ["openmp"] : [])
    ].join(" ");
}

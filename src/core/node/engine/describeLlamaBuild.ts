import type {Llama} from "node-llama-cpp";

/** What `describeLlamaBuild` reads of a `Llama`; a process that is not Cleanroom's (bench/plainTurn.mjs) prints these. */
export type LlamaBuildFacts = {
    buildType: Llama["buildType"],
    release: string,
    gpu: Llama["gpu"],
    /** `GGML_OPENMP` of the build's CMake options, `null` when not set. */
    openmp: string | null
};

/**
 * Which llama.cpp binary the process runs, in one short stable string such as
 * `prebuilt v0.4.0 cpu` or `local v0.4.0 cpu openmp` (a build made by `cleanroom engine build`).
 * Thread tunings are stored per build: what is fastest on one is not on the other.
 */
export function describeLlamaBuild(llama: Llama | LlamaBuildFacts) {
    const facts = "llamaCppRelease" in llama ? llamaBuildFacts(llama) : llama;
    return [
        facts.buildType === "localBuild" ? "local" : "prebuilt",
        facts.release,
        facts.gpu === false ? "cpu" : facts.gpu,
        ...(facts.buildType === "localBuild" && facts.openmp != null && facts.openmp !== "OFF" ? ["openmp"] : [])
    ].join(" ");
}

function llamaBuildFacts(llama: Llama): LlamaBuildFacts {
    return {buildType: llama.buildType, release: llama.llamaCppRelease.release, gpu: llama.gpu, openmp: llama.cmakeOptions.GGML_OPENMP ?? null};
}

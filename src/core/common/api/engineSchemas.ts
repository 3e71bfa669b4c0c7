import * as z from "zod";
import {WireErrorSchema} from "./recordedSchemas.js";

/** A build's steps: tools looked for, llama.cpp's source unpacked and configured, compiled (with a percentage), the binaries put in place. */
export const EngineBuildPhaseSchema = z.enum(["checking", "preparing", "compiling", "finishing"]);
export type EngineBuildPhase = z.infer<typeof EngineBuildPhaseSchema>;

/** A llama.cpp binary: node-llama-cpp's prebuilt one, or one built on this machine (`cleanroom engine build`). */
export const EngineBinarySchema = z.object({
    kind: z.enum(["prebuilt", "local"]),
    /** `describeLlamaBuild`'s words: `prebuilt v0.4.0 cpu`, `local v0.4.0 cpu openmp`. */
    description: z.string(),
    /** Its folder, `null` when not known. */
    directory: z.string().nullable(),
    /** The compiler its libraries name (`GCC: (Debian 12.2.0-14) 12.2.0`), `null` when they do not say. */
    compiler: z.string().nullable()
});
export type EngineBinary = z.infer<typeof EngineBinarySchema>;

export const EngineBuildToolSchema = z.object({
    tool: z.enum(["cmake", "C++ compiler", "make"]),
    path: z.string().nullable(),
    debianPackage: z.string()
});

/** A build running in the core, in order, ending with `done`, `failed` or `cancelled`. */
export const EngineBuildProgressSchema = z.object({
    state: z.enum(["running", "done", "failed", "cancelled"]),
    phase: EngineBuildPhaseSchema,
    /** From cmake's `[ NN%]` lines while compiling, else `null`. */
    percent: z.number().min(0).max(100).nullable(),
    /** Why it failed or was cancelled; null otherwise. */
    error: WireErrorSchema.nullable()
});
export type EngineBuildProgress = z.infer<typeof EngineBuildProgressSchema>;

/** Which llama.cpp binary runs models, whether one built for this CPU exists, and whether one can be built here. */
export const EngineStatusSchema = z.object({
    /** The binary this process's model loads use. */
    inUse: EngineBinarySchema,
    /** The finished build for this CPU, `null` when there is none. */
    localBuild: EngineBinarySchema.extend({cmakeOptions: z.record(z.string(), z.string())}).nullable(),
    /** What a process starting now would use for the same GPU setting: the local build when there is one, it runs on the CPU and CLEANROOM_LLAMA_BUILD is not `prebuilt`. */
    nextStart: z.enum(["prebuilt", "local"]),
    /** cmake, a C++ compiler and make, each found or not. */
    tools: z.array(EngineBuildToolSchema),
    /** Every tool is there, and the CPU binary runs models (a build for this CPU would be used). */
    canBuild: z.boolean(),
    /** The core's build in progress or last finished, `null` when none ran (the CLI's status: always `null`). */
    build: EngineBuildProgressSchema.nullable()
});
export type EngineStatus = z.infer<typeof EngineStatusSchema>;

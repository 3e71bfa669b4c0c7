import fs from "node:fs";
import path from "node:path";
import type {Llama} from "node-llama-cpp";
import type {EngineBinary, EngineStatus} from "../../common/api/engineSchemas.js";
import {describeLlamaBuild} from "./describeLlamaBuild.js";
import {findLlamaBuildTools} from "./findLlamaBuildTools.js";
import {findLocalLlamaBuild, llamaBuildSetup, nodeLlamaCppRoot} from "./localLlamaBuild.js";
import {readBinaryCompiler} from "./readBinaryCompiler.js";

/** What `engine status` says of `llama` (the process's `Llama`) and this machine; `build` is the caller's to fill in. */
export function readEngineStatus(llama: Llama, env: NodeJS.ProcessEnv = process.env): EngineStatus {
    const setup = llamaBuildSetup(env);
    const local = findLocalLlamaBuild(setup.localBuildsDirectory);
    const inUseDirectory = llama.buildType === "localBuild" ? findLocalLlamaBuild(llamaBuildSetup({}).localBuildsDirectory)?.binaryDirectory ?? null : prebuiltBinaryDirectory(llama.gpu);
    const inUse: EngineBinary = {
        kind: llama.buildType === "localBuild" ? "local" : "prebuilt",
        description: describeLlamaBuild(llama),
        directory: inUseDirectory,
        compiler: inUseDirectory == null ? null : readBinaryCompiler(inUseDirectory)
    };
    const tools = findLlamaBuildTools(env);
    const onCpu = llama.gpu === false;
    return {
        inUse,
        localBuild: local == null ? null : {
            kind: "local",
            description: `local ${llama.llamaCppRelease.release} cpu openmp`,
            directory: local.binaryDirectory,
            compiler: readBinaryCompiler(local.binaryDirectory),
            cmakeOptions: local.cmakeOptions
        },
        nextStart: local != null && onCpu && env.CLEANROOM_LLAMA_BUILD !== "prebuilt" ? "local" : inUse.kind,
        tools,
        canBuild: onCpu && tools.every((tool) => tool.path != null),
        build: null
    };
}

/** Where node-llama-cpp's prebuilt binary for this platform and GPU type lives (its `@node-llama-cpp/<platform>` package), `null` when not there. */
function prebuiltBinaryDirectory(gpu: Llama["gpu"]): string | null {
    const platform = process.platform === "darwin" ? "mac" : process.platform === "win32" ? "win" : process.platform;
    const name = `${platform}-${process.arch}${gpu === false || gpu === "metal" ? "" : `-${gpu}`}`;
    const directory = path.join(nodeLlamaCppRoot(), "..", "@node-llama-cpp", name, "bins", name);
    return fs.existsSync(directory) ? path.resolve(directory) : null;
}

// Global setup of the projects that run the model on Vulkan (model-vulkan-serial, e2e-serial; vitest.config.ts), run when the
// run starts. Mesa keeps the shaders it compiles in a cache of the machine's (~/.cache/mesa_shader_cache of the user's
// entry in /etc/passwd: the tests' own HOME does not move it), and on its software device (llvmpipe) the first Vulkan
// process of an empty cache spends 35-52 CPU-seconds compiling them (one CLI turn, 2026-12-07); every later one starts in 2-3. On a
// fresh CI machine that first process was one of the files that run alone at the end (gpuPanel.e2e took 38 s instead
// of 15). This runs one Vulkan turn of the compiled CLI at the lowest priority as the run starts, so that the compiling
// takes the CPU the first group leaves idle. At nice 19 it may not be done when the first group is (its files can keep
// both cores busy): each file of these projects then waits for it first (awaitVulkanWarmUp.ts), so that it never runs
// beside a file that holds a claim on the clock. It proves nothing and decides nothing: a failure is ignored (the files
// that need Vulkan say why it is missing), and whatever it has not compiled the first test compiles as before.
import {spawn} from "node:child_process";
import {once} from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {cliCommand} from "../../src/cli/cliCommand.js";
import {coreProcessEnv} from "../../src/core/common/coreProcessEnv.js";
import type {TestProject} from "vitest/node";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {hasTestModel, testModelPath} from "../helpers/testModel.js";

declare module "vitest" {
    export interface ProvidedContext {
        /** Written when the warm-up has ended (or never started): what awaitVulkanWarmUp.ts waits for. */
        vulkanWarmUpEndedFile: string
    }
}

const runningKey = Symbol.for("cleanroom.test.vulkanShaderWarmUp");

export default function warmVulkanShaderCache(project: TestProject) {
    // Both projects name this setup; one warm-up serves the run.
    const global = globalThis as {[runningKey]?: string};
    if (global[runningKey] != null) {
        project.provide("vulkanWarmUpEndedFile", global[runningKey]);
        return;
    }

    const {env, home} = hermeticCliEnv("vulkan-warm-up");
    const dir = path.dirname(home);
    const endedFile = path.join(dir, "ended");
    global[runningKey] = endedFile;
    project.provide("vulkanWarmUpEndedFile", endedFile);
    const ended = () => fs.writeFileSync(endedFile, "", {flag: "a"});
    const cleanUp = () => {
        delete global[runningKey];
        fs.rmSync(dir, {recursive: true, force: true});
    };
    if (!hasTestModel()) {
        ended();
        return cleanUp;
    }

    const {command, args} = cliCommand(["chat", "--model", testModelPath(), "--prompt", "Once upon a time", "--max-tokens", "8", "--threads", "1", "--gpu", "vulkan"]);
    const warmUp = spawn(command, args, {stdio: "ignore", env: {...coreProcessEnv, ...env}});
    const exited = once(warmUp, "exit").catch(() => undefined).finally(ended);
    warmUp.on("error", () => undefined);
    if (warmUp.pid != null)
        os.setPriority(warmUp.pid, 19);
    return async () => {
        if (warmUp.exitCode == null && warmUp.signalCode == null) {
            warmUp.kill();
            await exited;
        }
        cleanUp();
    };
}

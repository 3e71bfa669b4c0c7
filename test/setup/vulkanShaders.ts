// Global setup of the model-serial project (vitest.config.ts), run when the run starts: one short
// `chat --gpu vulkan` turn in a process of its own at the lowest priority, so that Mesa compiles
// ggml's compute shaders for llvmpipe while the first group leaves CPU idle, not inside the Vulkan
// files that run alone. Mesa keeps them in the user's ~/.cache/mesa_shader_cache (it finds the home
// in the password database, not $HOME, so every test process shares it): on a machine that has
// never run them, such as a fresh CI runner, the first Vulkan process compiled them all (one short
// turn: 31-39 CPU-s, against 4-7 with them cached), and gpuPanel.e2e's first card waited on that
// past its 60 s. Where they are cached already the turn costs a few CPU-seconds of idle time.
// Nothing waits for it or reads its result; the teardown stops it if it still runs.
import {spawn} from "node:child_process";
import {once} from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {cliCommand} from "../../src/cli/cliCommand.js";
import {coreProcessEnv} from "../../src/core/common/coreProcessEnv.js";
import {hasTestModel, repoRoot, testModelPath} from "../helpers/testModel.js";

export default function compileVulkanShaders() {
    if (!hasTestModel())
        return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-vulkan-shaders-"));
    const {command, args} = cliCommand(["chat", "--model", testModelPath(), "--gpu", "vulkan", "--json", "--prompt", "Once upon a time",
        "--max-tokens", "16", "--context-size", "512", "--threads", "1"]);
    const {GGML_VK_VISIBLE_DEVICES: _chosenByTheCli, ...env} = process.env;
    const turn = spawn(command, args, {
        cwd: repoRoot, stdio: "ignore",
        env: {...env, ...coreProcessEnv, CLEANROOM_HOME: dir, TMPDIR: dir, CLEANROOM_GPU: undefined,
            CLEANROOM_LLAMA_CPP_DIR: process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp")}
    });
    const exited = once(turn, "exit").catch(() => undefined);
    // No Vulkan device, or no CLI: the Vulkan files say so themselves.
    turn.on("error", () => undefined);
    if (turn.pid != null)
        os.setPriority(turn.pid, 19);
    return async () => {
        if (turn.exitCode == null && turn.signalCode == null) {
            turn.kill();
            await exited;
        }
        fs.rmSync(dir, {recursive: true, force: true});
    };
}

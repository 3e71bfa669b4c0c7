import {spawn, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {freePort} from "../../tools/freePort.js";

/** llama-server built by scripts/build-llama-cpp.sh (or CLEANROOM_LLAMA_SERVER). */
export function findLlamaServer(): string | null {
    const candidates = [
        process.env.CLEANROOM_LLAMA_SERVER,
        path.join(process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp"), "build", "bin", "llama-server")
    ];
    return candidates.find((candidate): candidate is string => candidate != null && fs.existsSync(candidate)) ?? null;
}

export type RunningLlamaServer = {url: string, process: ChildProcess, log: () => string, close: () => Promise<void>};

/** Starts llama-server on 127.0.0.1 with the given model and waits until /health answers 200. */
export async function startLlamaServer(binary: string, modelPath: string, args: string[]): Promise<RunningLlamaServer> {
    const port = await freePort();
    const child = spawn(binary, ["-m", modelPath, "--host", "127.0.0.1", "--port", String(port), ...args], {stdio: ["ignore", "pipe", "pipe"]});
    let log = "";
    child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
        if (child.exitCode != null)
            throw new Error(`llama-server exited with ${child.exitCode}:\n${log.slice(-2000)}`);
        try {
            if ((await fetch(`${base}/health`)).status === 200)
                break;
        } catch {
            // not listening yet
        }
        if (Date.now() > deadline) {
            child.kill("SIGKILL");
            throw new Error(`llama-server did not become healthy:\n${log.slice(-2000)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return {
        url: `${base}/v1`,
        process: child,
        log: () => log,
        close: async () => {
            if (child.exitCode != null)
                return;
            const exited = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
            if (child.exitCode == null)
                child.kill("SIGKILL");
        }
    };
}

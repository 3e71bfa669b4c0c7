import {execFileSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** llama-bench from a build of the source node-llama-cpp ships (scripts/build-llama-cpp.sh), when one is at hand. */
export function findLlamaBench(): string | null {
    const candidates = [
        process.env.CLEANROOM_LLAMA_BENCH,
        path.join(process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp"), "build", "bin", "llama-bench")
    ];
    return candidates.find((candidate): candidate is string => candidate != null && fs.existsSync(candidate)) ?? null;
}

/** Generation tokens/s as llama-bench measures it (`-p 0 -n N`). */
export function rawGenerationTokensPerSecond(llamaBench: string, modelPath: string, threads: number, tokens: number): number | null {
    try {
        const output = execFileSync(llamaBench, ["-m", modelPath, "-t", String(threads), "-p", "0", "-n", String(tokens), "-r", "5", "-o", "json"], {
            encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 300_000
        });
        const rows = JSON.parse(output) as Array<{avg_ts?: number}>;
        return rows[0]?.avg_ts ?? null;
    } catch {
        return null;
    }
}

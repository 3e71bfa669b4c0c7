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

/**
 * Tokens/s as llama-bench measures it: generation of `tokens` (`-p 0 -n N`), or prefill of a
 * `tokens`-token prompt (`-p N -n 0`). Flash attention off (`-fa 0`), as in node-llama-cpp's and
 * Cleanroom's contexts, so that the same work is compared.
 */
export function rawTokensPerSecond(llamaBench: string, modelPath: string, threads: number, kind: "generation" | "prefill", tokens: number, repetitions = 3): number | null {
    const counts = kind === "generation" ? ["-p", "0", "-n", String(tokens)] : ["-p", String(tokens), "-n", "0"];
    try {
        const output = execFileSync(llamaBench, ["-m", modelPath, "-t", String(threads), ...counts, "-fa", "0", "-r", String(repetitions), "-o", "json"], {
            encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 300_000
        });
        const rows = JSON.parse(output) as Array<{avg_ts?: number}>;
        return rows[0]?.avg_ts ?? null;
    } catch {
        return null;
    }
}

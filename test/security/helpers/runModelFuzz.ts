import {spawn} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {testBuildScript} from "../../helpers/testBuild.js";
import type {WorkerLine} from "./modelMutantWorker.js";

export type FuzzOptions = {
    modelPath: string,
    seed: number,
    /** Mutants to try, indices 0 … count-1. */
    count: number,
    /** Worker processes run side by side, each on its share of the indices. Defaults to `2`. */
    lanes?: number,
    /** A mutant that takes longer than this is a hang: the worker is killed. Defaults to `30000` ms. */
    perMutantTimeoutMs?: number,
    /** Extra environment for the workers (the harness self-check uses it). */
    env?: NodeJS.ProcessEnv
};

export type MutantOutcome = {
    index: number,
    kind: string,
    detail: string,
    bytes: number,
    outcome: "refused" | "loaded" | "unexpected" | "crashed" | "hung",
    code?: string,
    stage?: string,
    message?: string,
    turn?: string,
    ms?: number
};

export type FuzzReport = {
    seed: number,
    tried: number,
    outcomes: MutantOutcome[],
    crashes: MutantOutcome[],
    hangs: MutantOutcome[],
    unexpected: MutantOutcome[],
    workersStarted: number
};

/** modelMutantWorker.ts compiled in the test build (testBuild.ts): no tsx in the workers nor in node-llama-cpp's binding check forked from each. */
const workerPath = await testBuildScript("modelMutantWorker");

/**
 * Runs the mutants through worker processes, each validating and loading its mutants one after
 * another and reporting a line per mutant. A worker that dies after `start` without `result`
 * crashed on that mutant (recorded, and a new worker carries on from the next index); one that
 * stays silent past the timeout hung on it (killed, recorded, same).
 */
export async function runModelFuzz({modelPath, seed, count, lanes = 2, perMutantTimeoutMs = 30_000, env = process.env}: FuzzOptions): Promise<FuzzReport> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-fuzz-"));
    const outcomes: MutantOutcome[] = [];
    let workersStarted = 0;
    try {
        const share = Math.ceil(count / lanes);
        await Promise.all(Array.from({length: lanes}, async (_, lane) => {
            let next = lane * share;
            const end = Math.min(count, (lane + 1) * share);
            while (next < end) {
                workersStarted++;
                next = await runWorker({modelPath, seed, from: next, to: end, dir, timeoutMs: perMutantTimeoutMs, env}, outcomes);
            }
        }));
    } finally {
        fs.rmSync(dir, {recursive: true, force: true});
    }
    outcomes.sort((a, b) => a.index - b.index);
    return {
        seed,
        tried: outcomes.length,
        outcomes,
        crashes: outcomes.filter((outcome) => outcome.outcome === "crashed"),
        hangs: outcomes.filter((outcome) => outcome.outcome === "hung"),
        unexpected: outcomes.filter((outcome) => outcome.outcome === "unexpected"),
        workersStarted
    };
}

/** Runs one worker on [from, to) until it finishes or dies; returns the next index still to try. */
type WorkerRun = {modelPath: string, seed: number, from: number, to: number, dir: string, timeoutMs: number, env: NodeJS.ProcessEnv};

function runWorker({modelPath, seed, from, to, dir, timeoutMs, env}: WorkerRun, outcomes: MutantOutcome[]): Promise<number> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [workerPath, modelPath, String(seed), String(from), String(to), dir], {
            stdio: ["ignore", "ignore", "pipe", "pipe"], env
        });
        let stderr = "";
        child.stderr!.on("data", (chunk: Buffer) => {
            stderr = (stderr + chunk.toString("utf8")).slice(-4000);
        });
        let current: MutantOutcome | null = null;
        let next = from;
        let hungOn: MutantOutcome | null = null;
        let timer: NodeJS.Timeout | null = null;
        const arm = (ms: number) => {
            if (timer != null)
                clearTimeout(timer);
            timer = setTimeout(() => {
                hungOn = current;
                child.kill("SIGKILL");
            }, ms);
        };
        arm(timeoutMs * 2); // startup: the native backend

        let buffered = "";
        child.stdio[3]!.on("data", (chunk: Buffer) => {
            buffered += chunk.toString("utf8");
            let newline: number;
            while ((newline = buffered.indexOf("\n")) >= 0) {
                const line = JSON.parse(buffered.slice(0, newline)) as WorkerLine;
                buffered = buffered.slice(newline + 1);
                if (line.event === "start") {
                    current = {index: line.index, kind: line.kind, detail: line.detail, bytes: line.bytes, outcome: "crashed"};
                    arm(timeoutMs);
                } else if (line.event === "result" && current != null) {
                    outcomes.push({...current, ...line, outcome: line.outcome});
                    next = current.index + 1;
                    current = null;
                }
            }
        });
        child.on("error", reject);
        child.on("close", (code, signal) => {
            if (timer != null)
                clearTimeout(timer);
            if (current == null) {
                if (next < to)
                    reject(new Error(`fuzz worker exited (${code ?? signal}) between mutants at ${next}: ${stderr}`));
                else
                    resolve(to);
                return;
            }
            const died: MutantOutcome = current;
            outcomes.push(hungOn === died
                ? {...died, outcome: "hung", message: `no answer within ${timeoutMs} ms`}
                : {...died, outcome: "crashed", message: `worker died (${signal ?? `exit ${code}`}): ${lastLines(stderr)}`});
            resolve(died.index + 1);
        });
    });
}

function lastLines(text: string) {
    return text.trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join(" | ");
}

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as z from "zod";
import {writeFileDurably} from "../../../base/writeFileDurably.js";
import {machineFactsDir} from "../paths/appPaths.js";
import {traceStartup} from "../startupTrace.js";
import {fileStamp, folderStamps} from "./fileStamps.js";
import {gpuProbeFingerprint} from "./gpuProbeCache.js";

/** What node-llama-cpp tests before it loads a binary: the binding file, its backends folder, the GPU type. */
export type TestedBinary = {bindingPath: string, extBackendsPath: string | undefined, gpu: unknown};

const recordVersion = 1;
/** A few binaries at most pass here (the CPU one, a GPU one, a local build); older entries make room. */
const keptFingerprints = 8;
const RecordSchema = z.object({
    version: z.literal(recordVersion),
    passed: z.array(z.string()).max(keptFingerprints)
});

/** `binary-tests.json` among the machine's facts (`machineFactsDir`), beside `gpu-probe.json`. */
export function bindingTestFile(): string {
    return path.join(machineFactsDir(), "binary-tests.json");
}

/**
 * node-llama-cpp's binary test, remembered once passed. Before it loads a prebuilt binary on Linux,
 * node-llama-cpp forks a child that loads it first (an incompatible binary would crash the process
 * that loads it): a Node process of its own in every process that runs the model, about 0.2
 * CPU-seconds and a fifth of a second. A binary that passed on this machine passes again until
 * something it depends on changes, so the pass is kept under a fingerprint of the binary's files
 * (sizes and times), Node's version, the C libraries and `gpuProbeFingerprint` (the machine, its GPU
 * drivers, node-llama-cpp's binaries); any change tests again, as does a missing or unreadable record.
 * A failed test is never remembered. The compiled CLI and web mode route node-llama-cpp's test
 * through here (bin/cliBundle.mjs); a process that loads node-llama-cpp from node_modules tests as
 * node-llama-cpp does. `CLEANROOM_TRACE_STARTUP=1` tells which it was (`bindingTest`).
 */
export async function rememberedBindingTest(binary: TestedBinary, testInChild: () => Promise<boolean>, file = bindingTestFile()): Promise<boolean> {
    const fingerprint = bindingFingerprint(binary);
    const passed = readPassed(file);
    if (passed.includes(fingerprint)) {
        traceStartup("binary test", {bindingTest: "remembered"});
        return true;
    }
    const compatible = await testInChild();
    traceStartup("binary test", {bindingTest: compatible ? "passed in a child" : "failed in a child"});
    if (compatible)
        writePassed(file, [fingerprint, ...passed.filter((entry) => entry !== fingerprint)].slice(0, keptFingerprints));
    return compatible;
}

/** Everything a binary's load test depends on, as one hash: see `rememberedBindingTest`. A few stats. */
export function bindingFingerprint({bindingPath, extBackendsPath, gpu}: TestedBinary): string {
    const parts: unknown[] = [
        recordVersion, process.version, process.versions.modules, process.execPath,
        bindingPath, gpu ?? null, extBackendsPath ?? null,
        // The binding and the libraries beside it (libllama, libggml and its CPU variants), and the backends folder.
        folderStamps(path.dirname(bindingPath)),
        extBackendsPath != null ? folderStamps(extBackendsPath) : null,
        ...["/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"]
            .flatMap((dir) => ["libc.so.6", "libstdc++.so.6", "libm.so.6"].map((name) => fileStamp(path.join(dir, name)))),
        gpuProbeFingerprint()
    ];
    return crypto.createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

function readPassed(file: string): string[] {
    try {
        return RecordSchema.parse(JSON.parse(fs.readFileSync(file, "utf8"))).passed;
    } catch {
        return [];
    }
}

/** A failure to write only means testing again next time. */
function writePassed(file: string, passed: string[]) {
    try {
        fs.mkdirSync(path.dirname(file), {recursive: true, mode: 0o700});
        writeFileDurably(file, JSON.stringify({version: recordVersion, passed} satisfies z.infer<typeof RecordSchema>));
    } catch {
        // read-only data folder: test every time, as node-llama-cpp does
    }
}

import crypto from "node:crypto";
import fs from "node:fs";
import {createRequire} from "node:module";
import os from "node:os";
import path from "node:path";
import * as z from "zod";
import {writeFileDurably} from "../../../base/writeFileDurably.js";
import {machineFactsDir} from "../paths/appPaths.js";
import {cpuModelName} from "./cpuModelName.js";
import {fileStamp, folderStamps} from "./fileStamps.js";

/** What `--gpu auto` settled on: the binary node-llama-cpp loads for it (`false`: the CPU binary). */
export type AutoGpuBinary = "cuda" | "vulkan" | "metal" | false;

const recordVersion = 1;
const RecordSchema = z.object({
    version: z.literal(recordVersion),
    fingerprint: z.string(),
    binary: z.union([z.enum(["cuda", "vulkan", "metal"]), z.literal(false)]),
    probedAt: z.string()
});

/** `gpu-probe.json` among the machine's facts (`machineFactsDir`): one record, for the machine, drivers and llama.cpp build it was made on. */
export function gpuProbeFile(): string {
    return path.join(machineFactsDir(), "gpu-probe.json");
}

/**
 * What `auto`'s answer depends on, as one hash: the machine (host, CPU, OS release), the GPU
 * drivers (NVIDIA's driver version, the Vulkan ICD files, libcuda, the device nodes, the variables
 * that choose devices or drivers) and the llama.cpp build (node-llama-cpp's version, its binary
 * packages and local builds). Any change makes the next `auto` look again. A few stats, well under a millisecond.
 */
export function gpuProbeFingerprint(): string {
    const parts: unknown[] = [
        recordVersion, os.hostname(), process.platform, process.arch, os.release(), cpuModelName(),
        readText("/proc/driver/nvidia/version"),
        ...["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", path.join(os.homedir(), ".local/share/vulkan/icd.d"), "/dev/dri"]
            .map((dir) => folderStamps(dir)),
        folderStamps("/dev", (name) => name.startsWith("nvidia")),
        ...["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1"].map(fileStamp),
        ...["CUDA_VISIBLE_DEVICES", "GGML_VK_VISIBLE_DEVICES", "VK_ICD_FILENAMES", "VK_DRIVER_FILES", "LD_LIBRARY_PATH", "CUDA_PATH", "CLEANROOM_LLAMA_BUILD"]
            .map((name) => process.env[name] ?? null),
        ...llamaBuildParts()
    ];
    return crypto.createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

/** The binary `auto` settled on for this fingerprint, or null: never probed here, or probed on another machine, driver or build. */
export function readGpuProbe(fingerprint: string, file = gpuProbeFile()): AutoGpuBinary | null {
    try {
        const record = RecordSchema.parse(JSON.parse(fs.readFileSync(file, "utf8")));
        return record.fingerprint === fingerprint ? record.binary : null;
    } catch {
        return null;
    }
}

/** Remembers `auto`'s answer; a failure to write only means probing again next time. */
export function writeGpuProbe(fingerprint: string, binary: AutoGpuBinary, file = gpuProbeFile()): void {
    try {
        fs.mkdirSync(path.dirname(file), {recursive: true, mode: 0o700});
        writeFileDurably(file, JSON.stringify({version: recordVersion, fingerprint, binary, probedAt: new Date().toISOString()} satisfies z.infer<typeof RecordSchema>));
    } catch {
        // read-only data folder: probe every time, as before
    }
}

function readText(file: string): string | null {
    try {
        return fs.readFileSync(file, "utf8");
    } catch {
        return null;
    }
}

function llamaBuildParts(): unknown[] {
    try {
        const packageDir = path.join(path.dirname(createRequire(import.meta.url).resolve("node-llama-cpp")), "..");
        const binaries = path.join(packageDir, "..", "@node-llama-cpp");
        return [
            fileStamp(path.join(packageDir, "package.json")),
            folderStamps(binaries).map((entry) => fileStamp(path.join(binaries, path.basename(entry.split(":")[0]!), "package.json"))),
            folderStamps(path.join(packageDir, "llama", "localBuilds"))
        ];
    } catch {
        return [null];
    }
}

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {GpuBackend} from "../../common/api/types.js";

/**
 * What identifies the GPU driver a backend runs on, as far as can be read without starting it:
 * node-llama-cpp reports no driver version. A short, stable string that changes when the driver does:
 * - `cuda`: the NVIDIA kernel module's version (`/proc/driver/nvidia/version`), on Linux;
 * - `vulkan`: a digest of the installed Vulkan drivers (every ICD manifest the loader reads, with
 *   the size and modification time of the library each names), on Linux;
 * - elsewhere (Metal, Windows): the OS release, which ships the driver on macOS.
 */
export function gpuDriverFingerprint(backend: NonNullable<GpuBackend>): string {
    if (process.platform === "linux") {
        if (backend === "cuda") {
            const version = readFirstLine("/proc/driver/nvidia/version");
            if (version != null)
                return `nvidia ${/Kernel Module\s+(\S+)/.exec(version)?.[1] ?? version}`;
        }
        if (backend === "vulkan") {
            const drivers = vulkanDriverFiles();
            if (drivers.length > 0)
                return `vulkan icd ${crypto.createHash("sha256").update(drivers.join("\n")).digest("hex").slice(0, 16)}`;
        }
    }
    return `${os.platform()} ${os.release()}`;
}

function readFirstLine(file: string) {
    try {
        return fs.readFileSync(file, "utf8").split("\n")[0] ?? null;
    } catch {
        return null;
    }
}

/** Each ICD manifest the Vulkan loader would read: its content, and its library's size and time. */
function vulkanDriverFiles(): string[] {
    const given = process.env.VK_DRIVER_FILES ?? process.env.VK_ICD_FILENAMES;
    const manifests = given != null && given !== ""
        ? given.split(path.delimiter)
        : ["/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d"].flatMap(listJson);
    return manifests.sort().flatMap((manifest) => {
        let text: string;
        try {
            text = fs.readFileSync(manifest, "utf8");
        } catch {
            return [];
        }
        let library = "";
        try {
            const libraryPath: unknown = (JSON.parse(text) as {ICD?: {library_path?: unknown}}).ICD?.library_path;
            if (typeof libraryPath === "string") {
                const stat = fs.statSync(path.resolve(path.dirname(manifest), libraryPath));
                library = `${stat.size} ${stat.mtimeMs}`;
            }
        } catch {
            // A library named by bare name (found by the loader's search path) or missing: the manifest alone.
        }
        return [`${manifest} ${text.replace(/\s+/g, " ")} ${library}`];
    });
}

function listJson(folder: string) {
    try {
        return fs.readdirSync(folder).filter((name) => name.endsWith(".json")).map((name) => path.join(folder, name));
    } catch {
        return [];
    }
}

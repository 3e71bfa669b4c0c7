import path from "node:path";
import {parseArgs} from "node:util";
import {GpuSettingSchema} from "../core/common/api/schemas.js";
import type {GpuSetting} from "../core/common/api/types.js";
import {defaultDatabasePath} from "../core/node/paths/appPaths.js";
import {projectRootOf} from "../core/node/paths/projectRoot.js";
import {ensureRendererBuilt} from "./ensureRendererBuilt.js";
import {startWebServer, type WebServer} from "./server.js";
import {WebCoreProcess} from "./WebCoreProcess.js";

const repoRoot = projectRootOf(import.meta.url);
const usage = "usage: npm run web -- [--port P] [--db <file>] [--model <gguf> | --no-model] [--threads N] [--context-size N] [--gpu auto|metal|cuda|vulkan|off] " +
    "[--models-dir <folder>] [--catalog <catalog.json>] [--allow-loopback-downloads] [--lock-after <minutes>]";

/**
 * `npm run web`: the built renderer and the WebSocket bridge on 127.0.0.1, the core in a child
 * process of its own (`WebCoreProcess`), which the lock ends. Prints exactly one line on stdout:
 * the page's address with this launch's token.
 */
export async function runWebMode(args: string[]): Promise<{url: string | null}> {
    const {values} = parseArgs({args, options: {
        "port": {type: "string"},
        "db": {type: "string"},
        "model": {type: "string"},
        "no-model": {type: "boolean"},
        "threads": {type: "string"},
        "context-size": {type: "string"},
        "gpu": {type: "string"},
        "models-dir": {type: "string"},
        "catalog": {type: "string"},
        // Tests and a mirror on this machine: downloads may then also reach 127.0.0.1 and ::1, over http too.
        "allow-loopback-downloads": {type: "boolean"},
        // With a passphrase: minutes without a call before the app locks (0: never). Defaults to 15.
        "lock-after": {type: "string"},
        "help": {type: "boolean"}
    }});
    if (values.help === true) {
        process.stdout.write(usage + "\n");
        return {url: null};
    }

    // Ready before the URL is out: a signal right after it must still end every session scrubbed.
    let core: WebCoreProcess | null = null;
    let server: WebServer | null = null;
    let stopping = false;
    const stop = async () => {
        if (stopping)
            return;

        stopping = true;
        await core?.dispose(); // every session ends scrubbed (a core process still starting ends itself with this one)
        await server?.close();
        process.exit(0);
    };
    process.on("SIGINT", () => void stop());
    process.on("SIGTERM", () => void stop());

    const {outDir} = await ensureRendererBuilt(repoRoot);
    const lockAfter = wholeNumber("--lock-after", values["lock-after"]);
    core = await WebCoreProcess.start({
        database: values.db ?? defaultDatabasePath(),
        // Locked at start (a passphrase, none given): the startup model loads once the page unlocks the core.
        startupModel: values["no-model"] === true ? null : values.model,
        idleLockMs: lockAfter == null ? undefined : lockAfter === 0 ? null : lockAfter * 60_000,
        threads: wholeNumber("--threads", values.threads),
        contextSize: wholeNumber("--context-size", values["context-size"]),
        gpu: gpuSetting(values.gpu),
        modelsDir: values["models-dir"] != null ? path.resolve(values["models-dir"]) : undefined,
        catalogPath: values.catalog != null ? path.resolve(values.catalog) : undefined,
        allowLoopbackDownloads: values["allow-loopback-downloads"] === true
    });
    server = await startWebServer({rpc: core, rendererDir: outDir, port: wholeNumber("--port", values.port) ?? 0});
    process.stdout.write(server.url + "\n");
    return {url: server.url};
}

function wholeNumber(name: string, value: string | undefined): number | undefined {
    if (value == null)
        return undefined;

    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 0)
        throw new Error(`${name} must be a whole number, got "${value}"`);
    return parsed;
}

export function reportWebModeFailure(error: unknown) {
    process.stderr.write(`cleanroom web: ${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(1);
}

function gpuSetting(value: string | undefined): GpuSetting | undefined {
    if (value == null)
        return undefined;

    const parsed = GpuSettingSchema.safeParse(value);
    if (!parsed.success)
        throw new Error(`--gpu must be one of ${GpuSettingSchema.options.join(", ")}, not "${value}".`);
    return parsed.data;
}

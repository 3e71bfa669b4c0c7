// Web mode's core process: started by WebCoreProcess (child_process.fork), one JSON argument (WebCoreOptions).
import net from "node:net";
import path from "node:path";
import type {CoreHost} from "../core/node/host/openCoreHost.js";
import {openLockableCoreHost, type LockableCoreHost} from "../core/node/host/openLockableCoreHost.js";
import {resolveStartupModel} from "../core/node/host/resolveStartupModel.js";
import {terminalStoreKey} from "../core/node/host/terminalStoreKey.js";
import {realDatabasePath} from "../core/node/database/realDatabasePath.js";
import {projectRootOf} from "../core/node/paths/projectRoot.js";
import {startAppApiServer} from "../serve/startAppApiServer.js";
import {CoreWebSockets} from "./CoreWebSockets.js";
import {ToWebCoreSchema, WebCoreOptionsSchema, type FromWebCore, type WebCoreOptions} from "./webCoreMessages.js";

const repoRoot = projectRootOf(import.meta.url);
/** How long a page has to answer the close frame sent when the core locks, before its socket is cut. */
const closeGraceMs = 2000;
/** WebSocket close code "service restart": the page reconnects, to the next core process. */
const serviceRestart = 1012;

const send = (message: FromWebCore) => process.send?.(message);

/**
 * Holds everything that ever sees decrypted text, the key or the passphrase: the core, its
 * database, and the page's WebSocket (every frame is read here). It ends when the core locks, so
 * that nothing of it stays in memory; the process serving the page starts a fresh one.
 */
async function main() {
    if (process.send == null) {
        process.stderr.write("webCoreEntry: web mode starts me (child_process.fork with an IPC channel).\n");
        process.exit(1);
    }
    const options = WebCoreOptionsSchema.parse(JSON.parse(process.argv[2] ?? "null"));
    // One name per database file (a --db that is a link names what it leads to), taken again at each start: the file may exist by now.
    const database = realDatabasePath(options.database);
    let host: LockableCoreHost | null = null;
    let sockets: CoreWebSockets | null = null;
    let ending = false;

    const shutdown = async () => {
        if (ending)
            return;
        ending = true;
        sockets?.dispose();
        await host?.dispose(); // every session ends scrubbed
        process.exit(0);
    };
    const endAfterLock = async () => {
        ending = true;
        send({type: "locked"});
        // Let the answer to `app.lock` and the events of the lock reach the pages first.
        await new Promise((resolve) => setImmediate(resolve));
        await sockets?.closeGracefully(serviceRestart, "locked", closeGraceMs);
        process.exit(0);
    };
    process.on("SIGINT", () => void shutdown());
    process.on("SIGTERM", () => void shutdown());
    // The process serving the page is gone (even killed): nothing may outlive it.
    process.on("disconnect", () => void shutdown());
    process.on("message", (raw: unknown, handle: unknown) => {
        const message = ToWebCoreSchema.safeParse(raw);
        if (!message.success)
            return;
        if (message.data.type === "shutdown")
            void shutdown();
        else if (handle instanceof net.Socket) {
            if (ending || sockets == null)
                handle.destroy(); // the page reconnects, to the next core process
            else
                sockets.accept(message.data.request, handle, Buffer.from(message.data.head, "base64"));
        }
    });

    try {
        host = await openLockableCoreHost({
            database,
            // CLEANROOM_PASSPHRASE, or asked on the terminal: only the first core process of a run has either.
            key: await terminalStoreKey(database),
            idleLockMs: options.idleLockMs,
            onUnlocked: (opened) => loadStartupModel(opened, options),
            onLocked: () => {
                void host?.dispose(); // nothing left to close: from now on `app.unlock` is refused, the next process takes it
                void endAfterLock();
            },
            threads: options.threads,
            contextSize: options.contextSize,
            gpu: options.gpu,
            modelsDir: options.modelsDir,
            catalogPath: options.catalogPath,
            downloader: {fetcher: {allowLoopback: options.allowLoopbackDownloads}},
            apiServer: startAppApiServer
        });
    } catch (error) {
        send({type: "failed", message: error instanceof Error ? error.message : String(error)});
        process.exit(1);
    }
    sockets = new CoreWebSockets(host.service);
    send({type: "ready"});
    if (host.opened != null)
        await loadStartupModel(host.opened, options);
}

async function loadStartupModel(host: CoreHost, options: WebCoreOptions) {
    const model = options.startupModel === null ? null : resolveStartupModel({
        explicit: options.startupModel,
        modelsDir: host.modelsDir,
        folders: [path.join(repoRoot, "models"), host.modelsDir],
        saved: host.savedModelPath
    });
    if (model != null) {
        const status = await host.service.models.load(model.path);
        if (status.state === "error")
            process.stderr.write(`cleanroom web: the model did not load: ${status.error?.message ?? "unknown error"}\n`);
    }
}

main().catch((error: unknown) => {
    process.stderr.write(`cleanroom web: the core process failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
});

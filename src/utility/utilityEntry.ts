import {parseArgs} from "node:util";
import {GpuSettingSchema} from "../core/common/api/schemas.js";
import {defaultDatabasePath} from "../core/node/paths/appPaths.js";
import type {CoreHost} from "../core/node/host/openCoreHost.js";
import {openLockableCoreHost, type LockableCoreHost} from "../core/node/host/openLockableCoreHost.js";
import {resolveStartupModel} from "../core/node/host/resolveStartupModel.js";
import {keychainKeyWithoutPassphrase} from "../core/node/secrets/keychainStoreKey.js";
import {storeKeyFromEnvironment} from "../core/node/database/openDatabase.js";
import {realDatabasePath} from "../core/node/database/realDatabasePath.js";
import {ParentPortSecretVault, type VaultMessage, type VaultReply} from "../core/node/secrets/ParentPortSecretVault.js";
import {messagePortChannel, type MessagePortLike} from "./messagePortChannel.js";
import {serveCoreOverChannel} from "../core/node/rpc/serveCoreOverChannel.js";
import {startAppApiServer} from "../serve/startAppApiServer.js";

/** What Electron gives a utility process as `process.parentPort`, described here so the core never imports Electron. */
type ParentPortLike = {
    on(event: "message", listener: (event: {data: unknown, ports: MessagePortLike[]}) => void): unknown,
    postMessage(message: unknown): void
};

type ParentMessage = {type: "connect"} | {type: "shutdown"} | VaultReply;
/** To main besides vault requests: the core locked; main answers with `shutdown` and starts a fresh process for the next unlock. */
export type LockedMessage = {type: "locked"};

/**
 * The core process of the desktop app (Electron `utilityProcess`). Main hands it one
 * MessagePort per renderer connection; all state lives here, so a crash never takes the window.
 */
async function main() {
    const parentPort = (process as unknown as {parentPort?: ParentPortLike}).parentPort;
    if (parentPort == null) {
        process.stderr.write("utilityEntry: run me as an Electron utility process (utilityProcess.fork).\n");
        process.exit(1);
    }

    const {values} = parseArgs({options: {
        "db": {type: "string"},
        "key-storage": {type: "string"},
        "key-warning": {type: "string"},
        "gpu": {type: "string"}
    }});
    const gpu = GpuSettingSchema.safeParse(values.gpu);
    const vault = new ParentPortSecretVault((message: VaultMessage) => parentPort.postMessage(message),
        values["key-storage"] ?? "unavailable", values["key-warning"] != null && values["key-warning"] !== "" ? values["key-warning"] : null);

    // With a passphrase the core opens locked (unless CLEANROOM_PASSPHRASE gives it), and the window's lock screen unlocks it;
    // without one, the database key is the random key the OS keychain wraps.
    const ready: Promise<LockableCoreHost> = openLockableCoreHost({
        database: realDatabasePath(values.db ?? defaultDatabasePath()),
        vault,
        key: storeKeyFromEnvironment(),
        withoutPassphrase: keychainKeyWithoutPassphrase(vault),
        onUnlocked: loadStartupModel,
        // Lock means gone: this process, which held decrypted text and the key, ends (main's `shutdown`); nothing unlocks it again.
        onLocked: () => {
            void ready.then((host) => host.dispose());
            parentPort.postMessage({type: "locked"} satisfies LockedMessage);
        },
        gpu: gpu.success ? gpu.data : undefined,
        // The desktop app's window runs on this machine: its paperclip attaches files by path (#23).
        attachByPath: true,
        apiServer: startAppApiServer
    });

    parentPort.on("message", ({data, ports}) => {
        const message = data as ParentMessage;
        if (message.type === "vault-reply") {
            vault.settle(message);
            return;
        }
        void ready.then(async (host) => {
            if (message.type === "connect" && ports[0] != null)
                serveCoreOverChannel(host.service, messagePortChannel(ports[0]));
            else if (message.type === "shutdown") {
                await host.dispose();
                process.exit(0);
            }
        });
    });

    const {opened} = await ready;
    if (opened != null)
        await loadStartupModel(opened);
}

async function loadStartupModel(host: CoreHost) {
    const model = resolveStartupModel({modelsDir: host.modelsDir, folders: [host.modelsDir], saved: host.savedModelPath});
    if (model != null)
        await host.service.models.load(model.path);
}

main().catch((error: unknown) => {
    process.stderr.write(`cleanroom core: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
});

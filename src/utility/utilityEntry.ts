import {parseArgs} from "node:util";
import {GpuSettingSchema} from "../core/common/api/schemas.js";
import {defaultDatabasePath} from "../core/node/appPaths.js";
import {openCoreHost, type CoreHost} from "../core/node/host/openCoreHost.js";
import {resolveStartupModel} from "../core/node/host/resolveStartupModel.js";
import {keychainStoreKey} from "../core/node/secrets/keychainStoreKey.js";
import {storeKeyFromEnvironment} from "../core/node/store/openDatabase.js";
import {ParentPortSecretVault, type VaultMessage, type VaultReply} from "../core/node/secrets/ParentPortSecretVault.js";
import {messagePortChannel, type MessagePortLike} from "./messagePortChannel.js";
import {serveCoreOverChannel} from "../core/node/rpc/serveCoreOverChannel.js";

/** What Electron gives a utility process as `process.parentPort`, described here so the core never imports Electron. */
type ParentPortLike = {
    on(event: "message", listener: (event: {data: unknown, ports: MessagePortLike[]}) => void): unknown,
    postMessage(message: unknown): void
};

type ParentMessage = {type: "connect"} | {type: "shutdown"} | VaultReply;

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

    // The database key: the passphrase when one is set (CLEANROOM_PASSPHRASE for now: the app's unlock screen is not built yet),
    // else the random key the OS keychain wraps.
    const ready: Promise<CoreHost> = (async () => {
        const fromEnvironment = storeKeyFromEnvironment();
        const keychainKey = fromEnvironment.passphrase != null ? null : await keychainStoreKey(vault);
        return await openCoreHost({database: values.db ?? defaultDatabasePath(), vault, key: {...fromEnvironment, ...(keychainKey != null ? {keychainKey} : {})}, gpu: gpu.success ? gpu.data : undefined});
    })();

    parentPort.on("message", ({data, ports}) => {
        const message = data as ParentMessage;
        if (message.type === "vault-reply") {
            vault.settle(message);
            return;
        }
        void ready.then(async (opened) => {
            if (message.type === "connect" && ports[0] != null)
                serveCoreOverChannel(opened.service, messagePortChannel(ports[0]));
            else if (message.type === "shutdown") {
                await opened.close();
                process.exit(0);
            }
        });
    });

    const opened = await ready;
    const model = resolveStartupModel({modelsDir: opened.modelsDir, folders: [opened.modelsDir], saved: opened.savedModelPath});
    if (model != null)
        await opened.service.models.load(model.path);
}

main().catch((error: unknown) => {
    process.stderr.write(`cleanroom core: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
});

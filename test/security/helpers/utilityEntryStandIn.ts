// Runs the desktop app's core process (src/utility/utilityEntry.ts) under plain Node, with stand-ins
// for what Electron gives it (Electron cannot run here): `process.parentPort`, and main's key vault
// (safeStorage) answering its vault requests from a JSON file (STAND_IN_VAULT_FILE, so that a second
// start finds the same keychain key). One renderer connection is made over a real MessageChannel,
// relayed to the test over this process's IPC. `node utilityEntryStandIn.mjs --db … --key-storage …`, compiled in the test build (test/setup/testBundle.ts).
import fs from "node:fs";
import {MessageChannel, type MessagePort} from "node:worker_threads";

type Listener = (event: {data: unknown, ports: unknown[]}) => void;
type VaultRequest = {type: "vault", id: number, request: {op: "has" | "read" | "write", name: string, value?: string | null}};

const vaultFile = process.env.STAND_IN_VAULT_FILE!;
const readVault = (): Record<string, string> => fs.existsSync(vaultFile) ? JSON.parse(fs.readFileSync(vaultFile, "utf8")) : {};
const listeners: Listener[] = [];
const deliver = (data: unknown, ports: unknown[] = []) => {
    for (const listener of listeners)
        listener({data, ports});
};

function answerVault({id, request}: VaultRequest) {
    const secrets = readVault();
    if (request.op === "write") {
        if (request.value == null)
            delete secrets[request.name];
        else
            secrets[request.name] = request.value;
        fs.writeFileSync(vaultFile, JSON.stringify(secrets));
    }
    const value = request.op === "has" ? request.name in secrets : request.op === "read" ? secrets[request.name] ?? null : undefined;
    // Electron main answers on a later turn, never inside the core's postMessage.
    setImmediate(() => deliver({type: "vault-reply", id, ok: true, value}));
}

/** Electron's MessagePortMain gives listeners `{data}`; Node's MessagePort gives the data itself. */
function asElectronPort(port: MessagePort) {
    const wrapped = new Map<(...args: never[]) => void, (value: unknown) => void>();
    return {
        postMessage: (message: unknown) => port.postMessage(message),
        on(event: "message" | "close", listener: (event: {data: unknown}) => void) {
            const handler = event === "message" ? (data: unknown) => listener({data}) : () => (listener as () => void)();
            wrapped.set(listener, handler);
            port.on(event, handler);
        },
        off(event: "message" | "close", listener: (event: {data: unknown}) => void) {
            const handler = wrapped.get(listener);
            if (handler != null)
                port.off(event, handler);
        },
        start: () => port.start()
    };
}

(process as unknown as {parentPort: unknown}).parentPort = {
    on(_event: "message", listener: Listener) {
        listeners.push(listener);
    },
    postMessage(message: unknown) {
        if ((message as {type?: unknown}).type === "vault")
            answerVault(message as VaultRequest);
        else if ((message as {type?: unknown}).type === "locked")
            process.send!({locked: true}); // main would answer with `shutdown`: the test does
    }
};

const {port1, port2} = new MessageChannel();
port2.on("message", (message) => process.send!({rpc: message}));
process.on("message", (message: {rpc?: unknown, shutdown?: true}) => {
    if (message.shutdown === true)
        deliver({type: "shutdown"});
    else
        port2.postMessage(message.rpc);
});

await import("../../../src/utility/utilityEntry.js");
deliver({type: "connect"}, [asElectronPort(port1)]);

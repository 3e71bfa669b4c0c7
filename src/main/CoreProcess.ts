import {utilityProcess, type MessagePortMain, type UtilityProcess} from "electron";
import {EventRelay} from "lifecycle-utils";
import type {GpuSetting} from "../core/common/api/types.js";
import {coreProcessEnv} from "../core/common/coreProcessEnv.js";
import type {KeyVault, VaultRequest} from "./KeyVault.js";

export type CoreProcessOptions = {
    /** The built core entry (src/utility/utilityEntry.ts). */
    entryPath: string,
    /** SQLite file of the app. */
    databasePath: string,
    vault: KeyVault,
    /** `--gpu` given to the app: overrides the GPU setting for this run. Defaults to the setting. */
    gpu?: GpuSetting,
    /** Delay before restarting a core that died. Defaults to `1000` ms, doubling up to 30 s. */
    restartDelayMs?: number
};

const maxRestartDelayMs = 30_000;

/**
 * The core in its own utility process, so a crash or a long generation never freezes the
 * window. If it dies it is started again; listeners hear of both, and main reconnects the renderer.
 * When the core locks it says so, and is ended and started afresh at once (no `onExit`): a locked
 * app keeps no process that has held decrypted text, the key or the passphrase.
 */
export class CoreProcess {
    private readonly _options: CoreProcessOptions;
    /** The core's process died (it is started again after a delay). */
    public readonly onExit = new EventRelay<void>();
    /** The core's process started (first, and after each restart). */
    public readonly onStart = new EventRelay<void>();
    private _child: UtilityProcess | null = null;
    private _stopping = false;
    private _started = false;
    private _restartDelayMs: number;

    public constructor(options: CoreProcessOptions) {
        this._options = options;
        this._restartDelayMs = options.restartDelayMs ?? 1000;
    }

    public start() {
        const {entryPath, databasePath, vault, gpu} = this._options;
        const env: NodeJS.ProcessEnv = {...coreProcessEnv, ...process.env}; // a UV_THREADPOOL_SIZE the user set is kept
        if (this._started)
            delete env.CLEANROOM_PASSPHRASE; // used by the first core process only: a later one (after a lock, or a crash) starts locked
        this._started = true;
        const child = utilityProcess.fork(entryPath, [
            "--db", databasePath, "--key-storage", vault.storage, "--key-warning", vault.warning ?? "", ...(gpu != null ? ["--gpu", gpu] : [])
        ], {serviceName: "Cleanroom core", stdio: "inherit", env});
        this._child = child;

        let locked = false;
        child.on("message", (message: unknown) => {
            if ((message as {type?: unknown}).type === "locked") {
                locked = true;
                child.postMessage({type: "shutdown"});
            } else
                void this._answerVault(child, message);
        });
        child.once("spawn", () => {
            this.onStart.dispatchEvent();
        });
        child.once("exit", () => {
            if (this._child === child)
                this._child = null;
            if (this._stopping)
                return;
            if (locked) {
                this.start();
                return;
            }
            this.onExit.dispatchEvent();
            setTimeout(() => {
                if (!this._stopping)
                    this.start();
            }, this._restartDelayMs);
            this._restartDelayMs = Math.min(maxRestartDelayMs, this._restartDelayMs * 2);
        });
    }

    /** Hands the core one end of a renderer's channel. */
    public connect(port: MessagePortMain) {
        this._child?.postMessage({type: "connect"}, [port]);
    }

    public get running() {
        return this._child != null;
    }

    /** Asks the core to end every session (scrubbed) and exit; kills it if it takes too long. */
    public async stop(timeoutMs = 10_000) {
        this._stopping = true;
        const child = this._child;
        if (child == null)
            return;

        await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
                child.kill();
                resolve();
            }, timeoutMs);
            child.once("exit", () => {
                clearTimeout(timer);
                resolve();
            });
            child.postMessage({type: "shutdown"});
        });
    }

    private async _answerVault(child: UtilityProcess, message: unknown) {
        const request = message as {type?: unknown, id?: unknown, request?: VaultRequest};
        if (request.type !== "vault" || typeof request.id !== "number" || request.request == null)
            return;
        try {
            const value = await this._options.vault.handle(request.request);
            child.postMessage({type: "vault-reply", id: request.id, ok: true, value});
        } catch (error) {
            child.postMessage({type: "vault-reply", id: request.id, ok: false, error: error instanceof Error ? error.message : String(error)});
        }
    }
}

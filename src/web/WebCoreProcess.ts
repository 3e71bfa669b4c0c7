import {fork, type ChildProcess} from "node:child_process";
import net from "node:net";
import path from "node:path";
import type {Duplex} from "node:stream";
import {fileURLToPath} from "node:url";
import {coreProcessEnv} from "../core/common/coreProcessEnv.js";
import type {RpcSocketHandler, UpgradeRequestHead} from "./CoreWebSockets.js";
import {FromWebCoreSchema, type ToWebCore, type WebCoreOptions} from "./webCoreMessages.js";

/** Delay before starting a core process again after one died. Starts at 1 s, doubling up to 30 s. */
const firstRestartDelayMs = 1000;
const maxRestartDelayMs = 30_000;

type PendingConnection = {request: UpgradeRequestHead, socket: net.Socket, head: Buffer};

/**
 * Web mode's core in a child process (`webCoreEntry`), seen from the process that serves the
 * page: that process only does HTTP and hands each accepted WebSocket upgrade over as a raw socket
 * (`child.send(message, socket)`), so it never reads a frame, a passphrase or decrypted text. When
 * the core locks, its process ends and a fresh one (which has never seen the key) is started for
 * the next unlock; connections that arrive meanwhile wait for it. A core process that dies
 * otherwise is reported on stderr and started again.
 */
export class WebCoreProcess implements RpcSocketHandler {
    private readonly _options: WebCoreOptions;
    /** Beside this module: src/web/webCoreEntry.ts under tsx, or the compiled bundle's webCoreEntry.mjs beside this chunk (bin/cliBundle.mjs). */
    private readonly _entry = fileURLToPath(new URL(`./webCoreEntry${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
    private _child: ChildProcess | null = null;
    private _ready = false;
    private _pending: PendingConnection[] = [];
    private _starts = 0;
    private _stopping = false;
    private _restartDelayMs = firstRestartDelayMs;

    private constructor(options: WebCoreOptions) {
        this._options = options;
    }

    /** Starts the first core process; resolves once it is ready (open, or locked), rejects with its error if it cannot open the core. */
    public static async start(options: WebCoreOptions): Promise<WebCoreProcess> {
        const core = new WebCoreProcess(options);
        await core._start();
        return core;
    }

    /** The running core process (for tests and figures), null between two. */
    public get pid(): number | null {
        return this._child?.pid ?? null;
    }

    public accept(request: UpgradeRequestHead, socket: Duplex, head: Buffer) {
        if (!(socket instanceof net.Socket)) {
            socket.destroy();
            return;
        }
        stopReading(socket);
        const connection = {request, socket, head};
        if (this._ready && this._child != null) {
            this._handOver(this._child, connection);
            return;
        }
        this._pending.push(connection);
        socket.once("close", () => this._pending = this._pending.filter((pending) => pending !== connection));
    }

    /** Drops the connections waiting for a core process; those handed over are the core process's own. */
    public dropConnections() {
        for (const {socket} of this._pending)
            socket.destroy();
        this._pending = [];
    }

    /** Ends the core process after every session it holds ended scrubbed, and starts no other; resolves when it has exited. */
    public async dispose() {
        this._stopping = true;
        this.dropConnections();
        const child = this._child;
        if (child == null || child.exitCode != null || child.signalCode != null)
            return;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        this._send(child, {type: "shutdown"});
        await exited;
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    private _start(): Promise<void> {
        const first = this._starts++ === 0;
        const env: NodeJS.ProcessEnv = {...coreProcessEnv, ...process.env}; // a UV_THREADPOOL_SIZE the user set is kept
        if (!first)
            delete env.CLEANROOM_PASSPHRASE; // used once, by the first core process: a later one starts locked
        const child = fork(this._entry, [JSON.stringify(this._options)], {
            env,
            // Only the first may ask for the passphrase on the terminal. Its stdout goes to stderr: web mode's stdout is the URL line alone.
            stdio: [first ? "inherit" : "ignore", 2, "inherit", "ipc"],
            serialization: "json"
        });
        this._child = child;
        this._ready = false;
        let readied = false;
        let locked = false;

        return new Promise<void>((resolve, reject) => {
            let failure: string | null = null;
            child.on("message", (raw: unknown) => {
                const message = FromWebCoreSchema.safeParse(raw);
                if (!message.success)
                    return;
                if (message.data.type === "ready") {
                    readied = true;
                    this._ready = true;
                    this._restartDelayMs = firstRestartDelayMs;
                    for (const pending of this._pending.splice(0))
                        this._handOver(child, pending);
                    resolve();
                } else if (message.data.type === "failed")
                    failure = message.data.message;
                else if (message.data.type === "locked") {
                    locked = true;
                    this._ready = false; // connections from now on wait for the next process
                }
            });
            child.once("exit", (code, signal) => {
                if (this._child === child) {
                    this._child = null;
                    this._ready = false;
                }
                if (this._stopping)
                    return;
                const status = code != null ? `status ${code}` : `signal ${signal}`;
                if (first && !readied) {
                    reject(new Error(failure ?? `the core process exited (${status}) before it was ready`));
                    return;
                }
                if (locked) {
                    void this._start();
                    return;
                }
                process.stderr.write(`cleanroom web: the core process ended unexpectedly (${failure ?? status}); ` +
                    `starting it again in ${this._restartDelayMs / 1000} s. The page reconnects to it.\n`);
                setTimeout(() => {
                    if (!this._stopping)
                        void this._start();
                }, this._restartDelayMs);
                this._restartDelayMs = Math.min(maxRestartDelayMs, this._restartDelayMs * 2);
            });
        });
    }

    private _handOver(child: ChildProcess, {request, socket, head}: PendingConnection) {
        this._send(child, {type: "connection", request, head: head.toString("base64")}, socket);
    }

    private _send(child: ChildProcess, message: ToWebCore, socket?: net.Socket) {
        if (!child.connected) {
            socket?.destroy();
            return;
        }
        child.send(message, socket, (error) => {
            if (error != null)
                socket?.destroy();
        });
    }
}

/**
 * This process's copy of a handed-over socket is closed only once the core process acknowledges
 * it, and until then it would go on reading (and dropping, since Node detaches it) what the page
 * sends: the page's first frames, lost. Stopped at once, every byte waits in the kernel for the core process.
 */
function stopReading(socket: net.Socket) {
    (socket as unknown as {_handle?: {readStop?: () => number}})._handle?.readStop?.();
}

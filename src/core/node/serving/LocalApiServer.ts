import {EventRelay} from "lifecycle-utils";
import {CleanroomError, ModelNotLoadedError, toWireError, type WireError} from "../../common/errors.js";
import {defaultLocalApiPort, type LocalApiServerStatus} from "../../common/api/apiServerSchemas.js";
import type {Core} from "../Core.js";
import {apiModelName} from "./apiModelName.js";

/** The server as its starter hands it over. */
export type RunningApiServer = {
    baseUrl: string,
    port: number,
    /** Every endpoint it serves, `METHOD /path`, read from its route table. */
    endpoints: string[],
    /** Whether a request needs a key: once a key has guarded the server, revoking every key does not open it again. */
    keyRequired(): boolean,
    close(): Promise<void>
};

/**
 * Starts the OpenAI-compatible server (`src/serve`) on `core`, listening on 127.0.0.1:`port` with
 * the core's stored keys. The front end hosting the core passes it in: the core does not import its front ends.
 */
export type LocalApiServerStarter = (core: Core, port: number) => Promise<RunningApiServer>;

/**
 * The app's switch for the local API server (Settings → Local API server): it runs in the core's
 * process on the model the app has loaded, and stops when the core closes (quit or lock), every
 * request it was serving scrubbed. The user's choice is remembered with its port: turned on, it
 * starts again with the app once a model is loaded (`startIfLeftOn`); turned off, it stays off.
 */
export class LocalApiServer {
    /** Its status after every start and stop, whoever made it (the user, the app's start, the core closing). */
    public readonly onStatusChange = new EventRelay<LocalApiServerStatus>();
    private readonly _core: Core;
    private readonly _starter: LocalApiServerStarter | null;
    private _server: RunningApiServer | null = null;
    /** Why the start with the app failed; cleared by the user's next start or stop. */
    private _startProblem: WireError | null = null;
    private _leftOnChecked = false;
    /** Starts and stops one at a time, in order. */
    private _change: Promise<unknown> = Promise.resolve();

    public constructor(core: Core, starter: LocalApiServerStarter | null) {
        this._core = core;
        this._starter = starter;
    }

    public status(): LocalApiServerStatus {
        const port = this._server?.port ?? this._core.savedApiPort() ?? defaultLocalApiPort;
        const model = this._core.modelInfo();
        const keys = this._core.apiKeys.list().length;
        return {
            running: this._server != null,
            port,
            baseUrl: this._server?.baseUrl ?? `http://127.0.0.1:${port}/v1`,
            modelName: model == null ? null : apiModelName(model.path),
            keys,
            keyRequired: this._server?.keyRequired() ?? keys > 0,
            startsWithApp: this._starter != null && this._core.savedApiServerOn(),
            startProblem: this._startProblem,
            endpoints: this._server?.endpoints ?? []
        };
    }

    /**
     * The user turns it on, on `port` (the last one, else 1234), and it will start with the app from
     * now on: MODEL_NOT_LOADED without a model, PORT_IN_USE when the port is taken. Running already on
     * another port, it moves.
     */
    public async start(port?: number): Promise<LocalApiServerStatus> {
        return await this._changing(async () => {
            await this._start(port);
            this._startProblem = null;
            this._core.saveApiServerOn(true);
        });
    }

    /** The user turns it off (and it stays off at the next start): it stops taking requests; those in flight are stopped and scrubbed before it answers. */
    public async stop(): Promise<LocalApiServerStatus> {
        return await this._changing(async () => {
            this._startProblem = null;
            this._core.saveApiServerOn(false);
            await this._closeRunning();
        });
    }

    /**
     * The app has a model loaded (it started, or was unlocked): starts the server on its saved port if
     * the user left it on, once per core. A failure is kept for the panel to show (`startProblem`),
     * and the choice stays: the next start tries again.
     */
    public async startIfLeftOn(): Promise<void> {
        if (this._starter == null || this._leftOnChecked || !this._core.savedApiServerOn())
            return;
        this._leftOnChecked = true;
        await this._changing(async () => {
            if (this._server != null)
                return;
            try {
                await this._start();
            } catch (error) {
                this._startProblem = toWireError(error);
            }
        });
    }

    /** Stops it as the core closes (quit or lock), leaving the user's choice as it was. */
    public async close(): Promise<void> {
        await this._changing(() => this._closeRunning());
    }

    private async _start(port?: number) {
        const starter = this._starter;
        if (starter == null)
            throw new CleanroomError("INVALID_INPUT", "This core cannot serve other apps (it was started without the local API server).");
        if (this._core.modelInfo() == null)
            throw new ModelNotLoadedError("apiServer", "No model is loaded: load one first, then turn the local API server on. It serves the model the app has loaded.");
        const wanted = port ?? this._core.savedApiPort() ?? defaultLocalApiPort;
        if (this._server != null && (this._server.port === wanted || wanted === 0))
            return;
        await this._closeRunning();
        this._server = await starter(this._core, wanted);
        this._core.saveApiPort(this._server.port);
    }

    private async _closeRunning() {
        const server = this._server;
        this._server = null;
        await server?.close();
    }

    /** Runs `work` after the changes before it, then tells its listeners the status (whether `work` succeeded or not). */
    private _changing(work: () => Promise<void>): Promise<LocalApiServerStatus> {
        const run = async () => {
            try {
                await work();
                return this.status();
            } finally {
                this.onStatusChange.dispatchEvent(this.status());
            }
        };
        const next = this._change.then(run, run);
        this._change = next.catch(() => undefined);
        return next;
    }
}

import {CleanroomError} from "../../common/errors.js";
import {defaultLocalApiPort, type LocalApiServerStatus} from "../../common/api/apiServerSchemas.js";
import type {Core} from "../Core.js";
import {apiModelName} from "./apiModelName.js";

/** The server as its starter hands it over. */
export type RunningApiServer = {
    baseUrl: string,
    port: number,
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
 * The app's switch for the local API server (Settings → Local API server): off until started, it
 * runs in the core's process on the model the app has loaded, and stops when the core closes (quit
 * or lock), every request it was serving scrubbed. The port it was last started on is remembered.
 */
export class LocalApiServer {
    private readonly _core: Core;
    private readonly _starter: LocalApiServerStarter | null;
    private _server: RunningApiServer | null = null;
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
            keyRequired: this._server?.keyRequired() ?? keys > 0
        };
    }

    /** Starts it on `port` (the last one, else 1234): MODEL_NOT_LOADED without a model, INVALID_INPUT when the port is taken. Running already on another port, it moves. */
    public async start(port?: number): Promise<LocalApiServerStatus> {
        return await this._serially(async () => {
            const starter = this._starter;
            if (starter == null)
                throw new CleanroomError("INVALID_INPUT", "This core cannot serve other apps (it was started without the local API server).");
            if (this._core.modelInfo() == null)
                throw new CleanroomError("MODEL_NOT_LOADED", "No model is loaded: load one first, then turn the local API server on. It serves the model the app has loaded.");
            const wanted = port ?? this._core.savedApiPort() ?? defaultLocalApiPort;
            if (this._server != null && (this._server.port === wanted || wanted === 0))
                return this.status();
            await this._closeRunning();
            this._server = await starter(this._core, wanted);
            this._core.saveApiPort(this._server.port);
            return this.status();
        });
    }

    /** Stops taking requests; those in flight are stopped and scrubbed before it answers. */
    public async stop(): Promise<LocalApiServerStatus> {
        return await this._serially(async () => {
            await this._closeRunning();
            return this.status();
        });
    }

    private async _closeRunning() {
        const server = this._server;
        this._server = null;
        await server?.close();
    }

    private _serially<T>(work: () => Promise<T>): Promise<T> {
        const next = this._change.then(work, work);
        this._change = next.catch(() => undefined);
        return next;
    }
}

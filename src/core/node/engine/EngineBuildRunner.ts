import type {Llama} from "node-llama-cpp";
import type {EngineBuildProgress, EngineStatus} from "../../common/api/engineSchemas.js";
import {CleanroomError, toWireError} from "../../common/errors.js";
import {buildLocalLlama} from "./buildLocalLlama.js";
import {readEngineStatus} from "./readEngineStatus.js";

/**
 * The core's one build of llama.cpp for this CPU at a time (`engine.build`), reported through
 * `onProgress` (the `engine.buildProgress` event) in order, ending `done`, `failed` or `cancelled`.
 * The build itself runs in child processes (`buildLocalLlama`); the running core keeps its binary,
 * and the next start uses the new one.
 */
export class EngineBuildRunner {
    private readonly _llama: () => Promise<Llama>;
    private readonly _onProgress: (progress: EngineBuildProgress) => void;
    private readonly _env: NodeJS.ProcessEnv;
    private _running: AbortController | null = null;
    private _last: EngineBuildProgress | null = null;

    public constructor(llama: () => Promise<Llama>, onProgress: (progress: EngineBuildProgress) => void, env: NodeJS.ProcessEnv = process.env) {
        this._llama = llama;
        this._onProgress = onProgress;
        this._env = env;
    }

    public async status(): Promise<EngineStatus> {
        return {...readEngineStatus(await this._llama(), this._env), build: this._last};
    }

    /** Starts the build and returns at once (ENGINE_BUILD_RUNNING while one runs). */
    public start() {
        if (this._running != null)
            throw new CleanroomError("ENGINE_BUILD_RUNNING", "The engine is already being built; wait for it or cancel it.");
        const controller = new AbortController();
        this._running = controller;
        void buildLocalLlama({
            signal: controller.signal,
            env: this._env,
            onProgress: ({phase, percent}) => this._report({state: "running", phase, percent, error: null})
        }).then(
            () => this._report({state: "done", phase: "finishing", percent: 100, error: null}),
            (error: unknown) => {
                const wire = toWireError(error);
                this._report({state: wire.code === "ENGINE_BUILD_CANCELLED" ? "cancelled" : "failed", phase: this._last?.phase ?? "checking", percent: this._last?.percent ?? null, error: wire});
            }
        ).finally(() => {
            if (this._running === controller)
                this._running = null;
        });
    }

    /** Stops the running build, if any: what it made is removed. */
    public cancel(): boolean {
        if (this._running == null)
            return false;
        this._running.abort();
        return true;
    }

    private _report(progress: EngineBuildProgress) {
        this._last = progress;
        this._onProgress(progress);
    }
}

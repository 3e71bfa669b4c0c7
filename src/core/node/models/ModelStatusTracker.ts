import {withLock} from "lifecycle-utils";
import {toWireError} from "../../common/errors.js";
import type {ModelStatus} from "../../common/api/index.js";
import type {Core} from "../Core.js";

/** Loads models through the core and remembers how the last load went, for the status call and event. */
export class ModelStatusTracker {
    private readonly _core: Core;
    private readonly _onChange: (status: ModelStatus) => void;
    private _status: ModelStatus;

    public constructor(core: Core, onChange: (status: ModelStatus) => void) {
        this._core = core;
        this._onChange = onChange;
        const info = core.modelInfo();
        this._status = info == null
            ? {state: "none", path: null, info: null, error: null}
            : {state: "ready", path: info.path, info: info, error: null};
    }

    public get status(): ModelStatus {
        return this._status;
    }

    /** Loads `path`; a load already running finishes first. Failures are reported in the status, not thrown. */
    public async load(path: string): Promise<ModelStatus> {
        return await withLock([this, "load"], () => this._load(path));
    }

    private async _load(path: string): Promise<ModelStatus> {
        this._set({state: "loading", step: null, path, info: null, error: null});
        try {
            const info = await this._core.loadModel(path, (step) => this._set({state: "loading", step, path, info: null, error: null}));
            this._set({state: "ready", path, info: info, error: null});
        } catch (error) {
            this._set({state: "error", path, info: null, error: toWireError(error)});
        }
        return this._status;
    }

    private _set(status: ModelStatus) {
        this._status = status;
        this._onChange(status);
    }
}

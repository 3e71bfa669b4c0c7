import type {ApiEvent, ApiEventPayload, ApiInput, ApiMethod, ApiOutput} from "../../../src/core/common/api/index.js";
import {RemoteCallError, type CleanroomBridge} from "../../../src/core/common/rpc/index.js";
import type {AppCoreClient, ConnectionState} from "./AppCoreClient.js";

/** The core through the Electron preload's curated object; the preload reports core restarts as `core.status` events. */
export class BridgeCoreClient implements AppCoreClient {
    public readonly connection: ConnectionState = "connected";
    private readonly _bridge: CleanroomBridge;

    public constructor(bridge: CleanroomBridge) {
        this._bridge = bridge;
    }

    public async call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>> {
        const result = await this._bridge.call(method, input);
        if (!result.ok)
            throw new RemoteCallError(method, result.error);

        return result.value as ApiOutput<M>;
    }

    public subscribe<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void) {
        return this._bridge.subscribe(event, (payload) => listener(payload as ApiEventPayload<E>));
    }

    public onConnectionChange() {
        return () => undefined;
    }
}

import {apiEvents, type ApiEvent, type ApiEventPayload, type ApiInput, type ApiMethod, type ApiOutput} from "../../../src/core/common/api/index.js";
import {connectCoreClient, RemoteCallError, type ConnectedCoreClient, type RpcChannel} from "../../../src/core/common/rpc/index.js";
import type {AppCoreClient, ConnectionState} from "./AppCoreClient.js";

const retryDelaysMs = [250, 500, 1000, 2000, 4000];

/**
 * A client that keeps itself connected: when the channel drops it reports `disconnected`,
 * tells subscribers through a `core.status` event, and opens a new channel with backoff.
 */
export class ReconnectingCoreClient implements AppCoreClient {
    private readonly _open: () => Promise<RpcChannel>;
    private readonly _listeners = new Map<ApiEvent, Set<(payload: never) => void>>();
    private readonly _connectionListeners = new Set<(state: ConnectionState) => void>();
    private _client: ConnectedCoreClient | null = null;
    private _connection: ConnectionState = "connecting";
    private _attempt = 0;
    private _everConnected = false;

    public constructor(open: () => Promise<RpcChannel>) {
        this._open = open;
        void this._connect();
    }

    public get connection() {
        return this._connection;
    }

    public async call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>> {
        if (this._client == null)
            throw new RemoteCallError(method, {code: "INTERNAL", message: "Not connected to the core.", details: {disconnected: true}});

        return await this._client.call(method, input);
    }

    public subscribe<E extends ApiEvent>(event: E, listener: (payload: ApiEventPayload<E>) => void) {
        let set = this._listeners.get(event);
        if (set == null) {
            set = new Set();
            this._listeners.set(event, set);
        }
        set.add(listener as (payload: never) => void);
        return () => set.delete(listener as (payload: never) => void);
    }

    public onConnectionChange(listener: (state: ConnectionState) => void) {
        this._connectionListeners.add(listener);
        return () => this._connectionListeners.delete(listener);
    }

    private async _connect() {
        let channel: RpcChannel;
        try {
            channel = await this._open();
        } catch {
            this._setConnection("disconnected");
            const delay = retryDelaysMs[Math.min(this._attempt++, retryDelaysMs.length - 1)]!;
            setTimeout(() => void this._connect(), delay);
            return;
        }

        this._attempt = 0;
        const client = connectCoreClient(channel);
        for (const event of apiEvents)
            client.subscribe(event, (payload) => this._dispatch(event, payload));
        channel.onClose(() => {
            if (this._client !== client)
                return;
            this._client = null;
            this._setConnection("disconnected");
            this._dispatch("core.status", {state: "disconnected", model: null, pendingRestart: [], message: "The connection to the core was lost. Reconnecting…"});
            void this._connect();
        });
        this._client = client;
        const reconnected = this._everConnected;
        this._everConnected = true;
        this._setConnection("connected");
        if (reconnected)
            this._dispatch("core.status", {state: "restarted", model: null, pendingRestart: [], message: "Reconnected to the core."});
    }

    private _dispatch<E extends ApiEvent>(event: E, payload: ApiEventPayload<E>) {
        for (const listener of this._listeners.get(event) ?? [])
            listener(payload as never);
    }

    private _setConnection(state: ConnectionState) {
        if (this._connection === state)
            return;
        this._connection = state;
        for (const listener of this._connectionListeners)
            listener(state);
    }
}

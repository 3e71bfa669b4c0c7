import type {CoreClient} from "../../../src/core/common/rpc/index.js";

export type ConnectionState = "connecting" | "connected" | "disconnected";

/** The core as the app sees it: typed calls and events, plus whether the link is up. */
export interface AppCoreClient extends CoreClient {
    readonly connection: ConnectionState;
    onConnectionChange(listener: (state: ConnectionState) => void): () => void;
}

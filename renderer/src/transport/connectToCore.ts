import {bridgeGlobalName, type CleanroomBridge} from "../../../src/core/common/rpc/index.js";
import type {AppCoreClient} from "./AppCoreClient.js";
import {BridgeCoreClient} from "./BridgeCoreClient.js";
import {ReconnectingCoreClient} from "./ReconnectingCoreClient.js";
import {openWebSocketChannel} from "./webSocketChannel.js";

const tokenStorageKey = "cleanroom.token";

/**
 * The app's link to the core: the preload's bridge in the desktop app, else the WebSocket of
 * web mode. The rest of the renderer never knows which.
 */
export function connectToCore(): AppCoreClient {
    const bridge = (window as unknown as Record<string, CleanroomBridge | undefined>)[bridgeGlobalName];
    if (bridge != null)
        return new BridgeCoreClient(bridge);

    const token = takeLaunchToken();
    const url = `ws://${location.host}/rpc?token=${encodeURIComponent(token)}`;
    return new ReconnectingCoreClient(() => openWebSocketChannel(url));
}

/** The token from the address, moved into this tab's session storage so it leaves the address bar and history. */
function takeLaunchToken(): string {
    const params = new URLSearchParams(location.search);
    const fromUrl = params.get("token");
    if (fromUrl != null && fromUrl !== "") {
        sessionStorage.setItem(tokenStorageKey, fromUrl);
        params.delete("token");
        const rest = params.toString();
        history.replaceState(null, "", location.pathname + (rest !== "" ? "?" + rest : "") + location.hash);
        return fromUrl;
    }
    return sessionStorage.getItem(tokenStorageKey) ?? "";
}

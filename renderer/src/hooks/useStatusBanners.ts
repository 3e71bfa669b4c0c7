import {useEffect} from "react";
import type {AppSettings, ModelStatus} from "../../../src/core/common/api/index.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import type {Banner} from "./useBanners.js";
import {useCoreEvent} from "./useCoreEvent.js";

type BannerActions = {show: (banner: Banner) => void, dismiss: (id: string) => void, showError: (error: unknown) => void};

/**
 * The banners of the app's state: the link to the core lost and back (the cache is then read again,
 * `applyCoreEvent`), the model that could not load, a cloud key kept without OS encryption, and a
 * session that ended on its own (idle, evicted, model switched) and could not be verified scrubbed.
 */
export function useStatusBanners(client: AppCoreClient, model: ModelStatus | null, settings: AppSettings | null, {show, dismiss, showError}: BannerActions) {
    useCoreEvent(client, "core.status", (status) => {
        if (status.state === "disconnected")
            show({id: "connection", kind: "error", title: "Disconnected from the core", detail: status.message ?? "Reconnecting…"});
        else if (status.state === "restarted") {
            dismiss("connection");
            show({id: "connection-restored", kind: "info", title: "The core restarted", detail: status.message ?? "Sessions were scrubbed and start fresh from the stored history."});
        }
    });
    useEffect(() => {
        if (model?.state === "error" && model.error != null)
            show({id: "model", kind: "error", title: "The model could not be loaded", detail: model.error.message});
        else if (model?.state === "ready")
            dismiss("model");
    }, [model, show, dismiss]);
    useEffect(() => {
        if (settings?.cloud.keyStorage === "basic_text" && settings.cloud.keyStorageWarning != null)
            show({id: "key-storage", kind: "warning", title: "The cloud key is stored without OS encryption", detail: settings.cloud.keyStorageWarning});
    }, [settings, show]);
    // The same banner as the error a call gets for it (one banner per message).
    useCoreEvent(client, "scrub.backgroundFault", (fault) => showError(fault.error));
}

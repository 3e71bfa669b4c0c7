import {useCallback, useEffect, useState} from "react";
import type {ApiInput, AppSettings, ModelStatus} from "../../../src/core/common/api/index.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

/** The model's status and the app settings, kept current from `core.status` events. */
export function useModelAndSettings(client: AppCoreClient, onError: (error: unknown) => void) {
    const [model, setModel] = useState<ModelStatus | null>(null);
    const [settings, setSettings] = useState<AppSettings | null>(null);
    const [pendingRestart, setPendingRestart] = useState<string[]>([]);

    const refresh = useCallback(async () => {
        try {
            const [status, current] = await Promise.all([client.call("model.status", {}), client.call("settings.get", {})]);
            setModel(status);
            setSettings(current);
        } catch (error) {
            onError(error);
        }
    }, [client, onError]);

    useEffect(() => {
        if (client.connection === "connected")
            void refresh();
        return client.onConnectionChange((state) => {
            if (state === "connected")
                void refresh();
        });
    }, [client, refresh]);

    useCoreEvent(client, "core.status", (status) => {
        if (status.model != null)
            setModel(status.model);
        if (status.state === "ready")
            setPendingRestart(status.pendingRestart);
        if (status.state === "restarted")
            void refresh();
    });

    const save = useCallback(async (changes: ApiInput<"settings.set">) => {
        const updated = await client.call("settings.set", changes);
        setSettings(updated);
        return updated;
    }, [client]);

    const loadModel = useCallback(async (path: string) => {
        setModel({state: "loading", path, info: null, error: null});
        const status = await client.call("model.load", {path});
        setModel(status);
        await refresh();
        return status;
    }, [client, refresh]);

    return {model, settings, pendingRestart, save, loadModel, refresh};
}

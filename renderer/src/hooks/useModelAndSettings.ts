import {useQuery, useQueryClient} from "@tanstack/react-query";
import {useCallback, useState} from "react";
import type {ApiInput} from "../../../src/core/common/api/index.js";
import {queryKeys} from "../queries/queryKeys.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useConnected} from "./useConnected.js";
import {useCoreEvent} from "./useCoreEvent.js";
import {useReportError} from "./useReportError.js";

/** The model's status and the app settings (the `model` and `settings` queries; `core.status` events write the model's status in). */
export function useModelAndSettings(client: AppCoreClient, onError: (error: unknown) => void) {
    const queryClient = useQueryClient();
    const connected = useConnected(client);
    const model = useQuery({queryKey: queryKeys.model, queryFn: () => client.call("model.status", {}), enabled: connected});
    const settings = useQuery({queryKey: queryKeys.settings, queryFn: () => client.call("settings.get", {}), enabled: connected});
    useReportError(model.error ?? settings.error, onError);
    const [pendingRestart, setPendingRestart] = useState<string[]>([]);

    useCoreEvent(client, "core.status", (status) => {
        if (status.state === "ready")
            setPendingRestart(status.pendingRestart);
    });

    const refresh = useCallback(() => Promise.all([
        queryClient.invalidateQueries({queryKey: queryKeys.model}),
        queryClient.invalidateQueries({queryKey: queryKeys.settings})
    ]), [queryClient]);

    const save = useCallback(async (changes: ApiInput<"settings.set">) => {
        const updated = await client.call("settings.set", changes);
        queryClient.setQueryData(queryKeys.settings, updated);
        return updated;
    }, [client, queryClient]);

    const loadModel = useCallback(async (path: string) => {
        queryClient.setQueryData(queryKeys.model, {state: "loading", path, info: null, error: null});
        const status = await client.call("model.load", {path});
        queryClient.setQueryData(queryKeys.model, status);
        await refresh();
        return status;
    }, [client, queryClient, refresh]);

    return {model: model.data ?? null, settings: settings.data ?? null, pendingRestart, save, loadModel, refresh};
}

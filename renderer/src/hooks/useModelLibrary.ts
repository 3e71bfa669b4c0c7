import {useQuery, useQueryClient} from "@tanstack/react-query";
import {useCallback, useEffect, useState} from "react";
import type {DownloadProgressEvent, ModelStatus} from "../../../src/core/common/api/index.js";
import {queryKeys} from "../queries/queryKeys.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useConnected} from "./useConnected.js";
import {useCoreEvent} from "./useCoreEvent.js";
import {useReportError} from "./useReportError.js";

/** What is running right now, so its button shows it and the others wait. */
export type LibraryBusy = {kind: "default", id: string} | {kind: "import"} | {kind: "use", path: string} | null;

/**
 * The models folder as the Models view sees it: registered models and the catalog (with fit),
 * other apps' models (the `modelLibrary` and `detectedModels` queries), downloads kept current from
 * `models.downloadProgress` events, and the actions.
 * A download that fails is reported through `onError` with its error (checksum, disk space, server).
 */
export function useModelLibrary(client: AppCoreClient, onError: (error: unknown) => void) {
    const queryClient = useQueryClient();
    const connected = useConnected(client);
    // Read afresh each time the view opens (gcTime 0: dropped when it closes).
    const library = useQuery({queryKey: queryKeys.modelLibrary, queryFn: () => client.call("models.list", {}), enabled: connected, gcTime: 0});
    const detected = useQuery({queryKey: queryKeys.detectedModels, queryFn: () => client.call("models.detect", {}), enabled: connected, gcTime: 0});
    useReportError(library.error ?? detected.error, onError);
    const [downloads, setDownloads] = useState<Record<string, DownloadProgressEvent>>({});
    const [busy, setBusy] = useState<LibraryBusy>(null);

    // Downloads the core is running already (started before this view opened) show as they are.
    const running = library.data?.downloads;
    useEffect(() => {
        if (running != null && running.length > 0)
            setDownloads((known) => ({...known, ...Object.fromEntries(running.map((download) => [download.id, download]))}));
    }, [running]);

    const refresh = useCallback(() => queryClient.invalidateQueries({queryKey: queryKeys.modelLibrary}), [queryClient]);
    const detect = useCallback(() => queryClient.invalidateQueries({queryKey: queryKeys.detectedModels}), [queryClient]);

    useCoreEvent(client, "models.downloadProgress", (event) => {
        setDownloads((known) => ({...known, [event.id]: event}));
        if ((event.state === "failed" || event.state === "cancelled") && event.error != null)
            onError(event.error);
    });

    const download = useCallback(async (catalogId: string) => {
        try {
            await client.call("models.download", {catalogId});
        } catch (error) {
            onError(error);
        }
    }, [client, onError]);

    const cancel = useCallback(async (id: string) => {
        try {
            await client.call("models.cancelDownload", {id});
        } catch (error) {
            onError(error);
        }
    }, [client, onError]);

    /** Runs one action at a time, reports its failure, and refreshes the list after it. */
    const run = useCallback(async <T>(state: NonNullable<LibraryBusy>, work: () => Promise<T>): Promise<T | null> => {
        setBusy(state);
        try {
            return await work();
        } catch (error) {
            onError(error);
            return null;
        } finally {
            setBusy(null);
            void refresh();
        }
    }, [onError, refresh]);

    const importFile = useCallback((path: string) => run({kind: "import"}, () => client.call("models.import", {path})), [client, run]);

    /** Registers a model another app downloaded, in place. */
    const use = useCallback((path: string) => run({kind: "use", path}, async () => {
        const result = await client.call("models.detect", {add: true, paths: [path]});
        queryClient.setQueryData(queryKeys.detectedModels, result);
        if (result.rejected[0] != null)
            onError(result.rejected[0].error);
        return result.added[0] ?? null;
    }), [client, queryClient, run, onError]);

    /** Loads the model and makes it the default; resolves with the model's status (null when the call failed). */
    const makeDefault = useCallback((id: string) => run({kind: "default", id}, async (): Promise<ModelStatus> => {
        const {status} = await client.call("models.setDefault", {id});
        if (status.state === "error" && status.error != null)
            onError(status.error);
        return status;
    }), [client, run, onError]);

    return {library: library.data ?? null, detected: detected.data ?? null, downloads, busy, refresh, detect, download, cancel, importFile, use, makeDefault};
}

/** The latest download of a catalog model, if any was started in this session. */
export function latestDownloadOf(downloads: Record<string, DownloadProgressEvent>, catalogId: string): DownloadProgressEvent | null {
    return Object.values(downloads).filter((download) => download.catalogId === catalogId).at(-1) ?? null;
}

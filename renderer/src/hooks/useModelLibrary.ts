import {useCallback, useEffect, useState} from "react";
import type {DetectedModels, DownloadProgressEvent, ModelLibrary, ModelStatus} from "../../../src/core/common/api/index.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {useCoreEvent} from "./useCoreEvent.js";

/** What is running right now, so its button shows it and the others wait. */
export type LibraryBusy = {kind: "default", id: string} | {kind: "import"} | {kind: "use", path: string} | null;

/**
 * The models folder as the Models view sees it: registered models and the catalog (with fit),
 * other apps' models, downloads kept current from `models.downloadProgress` events, and the actions.
 * A download that fails is reported through `onError` with its error (checksum, disk space, server).
 */
export function useModelLibrary(client: AppCoreClient, onError: (error: unknown) => void) {
    const [library, setLibrary] = useState<ModelLibrary | null>(null);
    const [detected, setDetected] = useState<DetectedModels | null>(null);
    const [downloads, setDownloads] = useState<Record<string, DownloadProgressEvent>>({});
    const [busy, setBusy] = useState<LibraryBusy>(null);

    const refresh = useCallback(async () => {
        try {
            const current = await client.call("models.list", {});
            setLibrary(current);
            if (current.downloads.length > 0)
                setDownloads((known) => ({...known, ...Object.fromEntries(current.downloads.map((download) => [download.id, download]))}));
        } catch (error) {
            onError(error);
        }
    }, [client, onError]);

    const detect = useCallback(async () => {
        try {
            setDetected(await client.call("models.detect", {}));
        } catch (error) {
            onError(error);
        }
    }, [client, onError]);

    useEffect(() => {
        void refresh();
        void detect();
    }, [refresh, detect]);

    useCoreEvent(client, "models.downloadProgress", (event) => {
        setDownloads((known) => ({...known, [event.id]: event}));
        if (event.state === "done")
            void refresh();
        else if ((event.state === "failed" || event.state === "cancelled") && event.error != null)
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
        setDetected(result);
        if (result.rejected[0] != null)
            onError(result.rejected[0].error);
        return result.added[0] ?? null;
    }), [client, run, onError]);

    /** Loads the model and makes it the default; resolves with the model's status (null when the call failed). */
    const makeDefault = useCallback((id: string) => run({kind: "default", id}, async (): Promise<ModelStatus> => {
        const {status} = await client.call("models.setDefault", {id});
        if (status.state === "error" && status.error != null)
            onError(status.error);
        return status;
    }), [client, run, onError]);

    return {library, detected, downloads, busy, refresh, detect, download, cancel, importFile, use, makeDefault};
}

/** The latest download of a catalog model, if any was started in this session. */
export function latestDownloadOf(downloads: Record<string, DownloadProgressEvent>, catalogId: string): DownloadProgressEvent | null {
    return Object.values(downloads).filter((download) => download.catalogId === catalogId).at(-1) ?? null;
}

import {useCallback, useEffect, useState} from "react";
import type {ApiInput, AppSettings, DownloadProgressEvent, ModelLibrary} from "../../../src/core/common/api/index.js";
import {describeError} from "../describeError.js";
import {formatBytes} from "../format.js";
import {latestDownloadOf} from "../hooks/useModelLibrary.js";
import {useCoreEvent} from "../hooks/useCoreEvent.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {DownloadBar} from "./models/DownloadBar.js";

/**
 * Settings → Document search (#23): whether a conversation's documents are searched by their words
 * alone (BM25) or by words and meaning (an embedding model), the choice of the embedding model
 * among the registered ones (or none), and the catalog's embedding models to download.
 */
export function DocumentSearchSettings({client, settings, onSave}: {
    client: AppCoreClient, settings: AppSettings, onSave: (changes: ApiInput<"settings.set">) => Promise<unknown>
}) {
    const [library, setLibrary] = useState<ModelLibrary | null>(null);
    const [downloads, setDownloads] = useState<Record<string, DownloadProgressEvent>>({});
    const [problem, setProblem] = useState<string | null>(null);

    const refresh = useCallback(async () => {
        try {
            setLibrary(await client.call("models.list", {}));
        } catch (error) {
            setProblem(describeError(error).detail);
        }
    }, [client]);
    useEffect(() => void refresh(), [refresh]);
    useCoreEvent(client, "models.downloadProgress", (event) => {
        setDownloads((known) => ({...known, [event.id]: event}));
        if (event.state === "done")
            void refresh();
        else if (event.state === "failed" && event.error != null)
            setProblem(describeError(event.error).detail);
    });

    const run = async (work: () => Promise<unknown>) => {
        setProblem(null);
        try {
            await work();
        } catch (error) {
            setProblem(describeError(error).detail);
        }
    };

    const chosen = settings.embeddingModelPath;
    const embeddingCatalogIds = new Set(library?.catalog.filter((entry) => entry.purpose === "embedding").map((entry) => entry.id));
    const isEmbedding = (catalogId: string | null) => catalogId != null && embeddingCatalogIds.has(catalogId);
    const installed = library?.installed.filter((model) => model.present) ?? [];
    const embeddingModels = installed.filter((model) => isEmbedding(model.catalogId));
    const otherModels = installed.filter((model) => !isEmbedding(model.catalogId));
    const chosenModel = installed.find((model) => model.path === chosen);
    const toDownload = library?.catalog.filter((entry) => entry.purpose === "embedding" && entry.installedAs == null) ?? [];

    return (
        <fieldset>
            <legend>Document search</legend>
            <p role="status" aria-label="Document search mode">
                {chosen == null
                    ? "Keyword only (BM25): passages of a long document are found by the words they share with your message."
                    : `Keyword + meaning (embeddings): passages are found by their words and by what they mean, with ${chosenModel?.name ?? chosen}.`}
            </p>
            <label className="field">
                <span>Embedding model</span>
                <select aria-label="Embedding model" value={chosen ?? ""}
                    onChange={(event) => void onSave({embeddingModelPath: event.target.value === "" ? null : event.target.value})}>
                    <option value="">None (keyword search only)</option>
                    {embeddingModels.length > 0 && (
                        <optgroup label="Embedding models">
                            {embeddingModels.map((model) => <option key={model.id} value={model.path}>{model.name}</option>)}
                        </optgroup>
                    )}
                    {otherModels.length > 0 && (
                        <optgroup label="Other models (any GGUF embeds; an embedding model does it better)">
                            {otherModels.map((model) => <option key={model.id} value={model.path}>{model.name}</option>)}
                        </optgroup>
                    )}
                    {chosen != null && chosenModel == null && <option value={chosen}>{chosen}</option>}
                </select>
                <small>Runs on this machine beside the chat model; its context is scrubbed like a conversation's, and its vectors stay with each conversation in the encrypted store.</small>
            </label>
            {toDownload.map((entry) => {
                const download = latestDownloadOf(downloads, entry.id);
                const active = download != null && (download.state === "running" || download.state === "verifying");
                return (
                    <div key={entry.id} className="settings-models" aria-label={entry.name}>
                        <span className="small muted">{entry.name} · {formatBytes(entry.fileBytes)} · {entry.license}</span>
                        {active
                            ? <DownloadBar download={download} onCancel={() => void run(() => client.call("models.cancelDownload", {id: download.id}))} />
                            : <button type="button" className="button" aria-label={`Download ${entry.name}`}
                                onClick={() => void run(() => client.call("models.download", {catalogId: entry.id}))}>Download</button>}
                    </div>
                );
            })}
            {problem != null && <p className="inline-error" role="alert">{problem}</p>}
        </fieldset>
    );
}

import type {ReactNode} from "react";
import type {ModelStatus} from "../../../../src/core/common/api/index.js";
import {latestDownloadOf, useModelLibrary} from "../../hooks/useModelLibrary.js";
import type {AppCoreClient} from "../../transport/AppCoreClient.js";
import {CatalogCard} from "./CatalogCard.js";
import {DetectedModelList} from "./DetectedModelList.js";
import {ImportModelForm} from "./ImportModelForm.js";
import {InstalledModelList} from "./InstalledModelList.js";

export type ModelsViewProps = {
    client: AppCoreClient,
    /** The app's banners (download errors among them), shown at the top. */
    banners: ReactNode,
    onError: (error: unknown) => void,
    onBack: () => void,
    /** A model was made the default and is loaded: the chat can open. */
    onModelReady: (status: ModelStatus) => void
};

/**
 * Models: the recommended catalog (fit, download with progress), models other apps downloaded
 * (Use), import of a GGUF file, and the registered models (Make default, which loads it).
 */
export function ModelsView({client, banners, onError, onBack, onModelReady}: ModelsViewProps) {
    const library = useModelLibrary(client, onError);
    const settingDefaultId = library.busy?.kind === "default" ? library.busy.id : null;
    const makeDefault = (id: string) => void library.makeDefault(id).then((status) => {
        if (status?.state === "ready")
            onModelReady(status);
    });
    const installed = library.library?.installed ?? [];

    return (
        <main className="models-page" aria-label="Models">
            <header className="models-header">
                <button type="button" className="button button-ghost" onClick={onBack}>← Back</button>
                <div>
                    <h1>Models</h1>
                    {library.library != null && <p className="small muted">Downloads go to <span className="mono">{library.library.modelsDir}</span></p>}
                </div>
            </header>
            {banners}
            <div className="models-body">
                <section className="models-section" aria-labelledby="models-installed">
                    <h2 id="models-installed">Your models</h2>
                    <InstalledModelList models={installed} settingDefaultId={settingDefaultId} onMakeDefault={makeDefault} />
                </section>

                <section className="models-section" aria-labelledby="models-catalog">
                    <h2 id="models-catalog">Recommended</h2>
                    <p className="muted small">Each file is checked against its size and SHA-256 before it is offered. Fit is estimated for this machine's memory.</p>
                    {library.library == null
                        ? <p className="muted">Loading…</p>
                        : <div className="model-cards">
                            {library.library.catalog.filter((entry) => entry.purpose === "chat").map((entry) => (
                                <CatalogCard key={entry.id} entry={entry} download={latestDownloadOf(library.downloads, entry.id)}
                                    isDefault={entry.installedAs != null && entry.installedAs === library.library?.defaultModelId}
                                    settingDefault={settingDefaultId != null} onDownload={() => void library.download(entry.id)}
                                    onCancel={(id) => void library.cancel(id)} onMakeDefault={makeDefault} />
                            ))}
                        </div>}
                </section>

                <section className="models-section" aria-labelledby="models-detected">
                    <h2 id="models-detected">Found on this computer</h2>
                    <DetectedModelList detected={library.detected} usingPath={library.busy?.kind === "use" ? library.busy.path : null}
                        onUse={(path) => void library.use(path)} onSearchAgain={() => void library.detect()} />
                </section>

                <section className="models-section" aria-labelledby="models-import">
                    <h2 id="models-import">Import a GGUF file…</h2>
                    <p className="muted small">Give the file's full path. It is checked (GGUF, complete, an architecture this app runs) and used where it is; nothing is copied.</p>
                    <ImportModelForm importing={library.busy?.kind === "import"} onImport={library.importFile} />
                </section>
            </div>
        </main>
    );
}

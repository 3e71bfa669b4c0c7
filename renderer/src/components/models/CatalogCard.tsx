import type {CatalogModel, DownloadProgressEvent} from "../../../../src/core/common/api/index.js";
import {describeError} from "../../describeError.js";
import {formatBytes} from "../../format.js";
import {DownloadBar} from "./DownloadBar.js";
import {FitBadges, fitFacts} from "./FitBadges.js";

export type CatalogCardProps = {
    entry: CatalogModel,
    download: DownloadProgressEvent | null,
    isDefault: boolean,
    settingDefault: boolean,
    onDownload: () => void,
    onCancel: (id: string) => void,
    onMakeDefault: (id: string) => void
};

/** One recommended model: what it is, whether it fits, and Download (with progress) or Make default once it is here. */
export function CatalogCard({entry, download, isDefault, settingDefault, onDownload, onCancel, onMakeDefault}: CatalogCardProps) {
    const active = download != null && (download.state === "running" || download.state === "verifying");
    const failed = download != null && download.state === "failed" && entry.installedAs == null;
    return (
        <article className="model-card" aria-label={entry.name}>
            <header className="model-card-header">
                <h3>{entry.name}</h3>
                <FitBadges fit={entry.fit} />
            </header>
            <p className="model-summary">{entry.summary}</p>
            <dl className="facts model-facts">
                <dt>Size</dt><dd>{formatBytes(entry.fileBytes)} · {entry.parameters} parameters, {entry.quantization}</dd>
                <dt>Licence</dt><dd>{entry.license}</dd>
                {fitFacts(entry.fit).map(([label, value]) => [<dt key={`${label}-t`}>{label}</dt>, <dd key={`${label}-d`}>{value}</dd>])}
            </dl>
            {active && <DownloadBar download={download} onCancel={() => onCancel(download.id)} />}
            {failed && <p className="inline-error">{download.error != null ? describeError(download.error).title : "The download failed"}.</p>}
            {!active && (
                <div className="model-actions">
                    {entry.installedAs == null
                        ? <button type="button" className="button button-primary" aria-label={`Download ${entry.name}`} onClick={onDownload}>
                            {failed ? "Try again" : "Download"}
                        </button>
                        : <>
                            <span className="badge badge-ok">Downloaded</span>
                            {isDefault
                                ? <span className="badge badge-accent">Default</span>
                                : <button type="button" className="button button-primary" disabled={settingDefault}
                                    aria-label={`Make ${entry.name} the default`} onClick={() => onMakeDefault(entry.installedAs!)}>
                                    {settingDefault ? "Loading…" : "Make default"}
                                </button>}
                        </>}
                </div>
            )}
        </article>
    );
}

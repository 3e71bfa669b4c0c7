import type {DownloadProgressEvent} from "../../../../src/core/common/api/index.js";
import {formatBytes} from "../../format.js";

/** A download's progress bar (with its percentage for assistive tech), bytes, speed and Cancel. */
export function DownloadBar({download, onCancel}: {download: DownloadProgressEvent, onCancel: () => void}) {
    const percent = download.total > 0 ? Math.min(100, Math.floor((download.bytes / download.total) * 100)) : 0;
    const verifying = download.state === "verifying";
    const amount = download.total > 0 ? `${formatBytes(download.bytes)} of ${formatBytes(download.total)}` : formatBytes(download.bytes);
    return (
        <div className="download">
            <div className="progress" role="progressbar" aria-label="Download progress" aria-valuemin={0} aria-valuemax={100}
                aria-valuenow={percent} aria-valuetext={verifying ? `Verifying, ${percent}%` : `${percent}%, ${amount}`}>
                <div className={`progress-fill${verifying ? " verifying" : ""}`} style={{width: `${percent}%`}} />
            </div>
            <div className="download-line">
                <span className="mono small">
                    {verifying ? `Verifying size and SHA-256… ${percent}%` : `${percent}% · ${amount} · ${formatBytes(download.bytesPerSecond)}/s`}
                </span>
                <button type="button" className="button button-small" onClick={onCancel} disabled={verifying}>Cancel</button>
            </div>
        </div>
    );
}

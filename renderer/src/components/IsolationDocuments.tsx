import type {IsolationDocument} from "../../../src/core/common/api/documentSchemas.js";
import {formatBytes, formatEnglishCount, formatTime} from "../format.js";

/**
 * The Isolation panel's documents (#23 item 7): each document of the conversation with its size,
 * pages and mode, and what of it was sent where: to the local model (whole, or how many passages
 * in how many replies) and to the cloud (each request that carried its whole text: host and time).
 */
export function IsolationDocuments({documents}: {documents: IsolationDocument[]}) {
    return (
        <div className="card" aria-label="Documents">
            <div className="card-title">Documents</div>
            {documents.length === 0
                ? <p className="muted">No documents in this conversation.</p>
                : (
                    <ul className="isolation-documents">
                        {documents.map((document) => (
                            <li key={document.attachmentId} aria-label={document.name}>
                                <div className="isolation-document-name">{document.name}</div>
                                <div className="small muted">
                                    {formatBytes(document.bytes)} · {document.pages} {document.pages === 1 ? "page" : "pages"} · {document.mode === "whole" ? "given whole" : "retrieved by passages"}
                                </div>
                                <div className="small">{localSummary(document.local)}</div>
                                {document.cloud.length === 0
                                    ? <div className="small">Never sent to the cloud</div>
                                    : (
                                        <ul className="small isolation-document-cloud" aria-label={`Cloud sends of ${document.name}`}>
                                            {document.cloud.map((send, index) => (
                                                <li key={index} className="warning-text">Sent whole to the cloud: {send.endpointHost}, {formatTime(send.at)}</li>
                                            ))}
                                        </ul>
                                    )}
                            </li>
                        ))}
                    </ul>
                )}
        </div>
    );
}

function localSummary({repliesGivenWhole, passagesGiven, repliesGivenPassages}: IsolationDocument["local"]): string {
    const parts = [
        ...repliesGivenWhole > 0 ? [`whole text in ${plural(repliesGivenWhole, "reply", "replies")}`] : [],
        ...passagesGiven > 0 ? [`${plural(passagesGiven, "passage", "passages")} in ${plural(repliesGivenPassages, "reply", "replies")}`] : []
    ];
    return parts.length === 0 ? "Not sent to the local model yet" : `Sent to the local model: ${parts.join("; ")}`;
}

function plural(count: number, one: string, many: string): string {
    return `${formatEnglishCount(count)} ${count === 1 ? one : many}`;
}

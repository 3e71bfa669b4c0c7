import {CleanroomError} from "../../../common/errors.js";

/** What a document turned out to be, judged by its content, never by its file name. */
export type DocumentFormat = "text" | "markdown" | "code" | "pdf" | "docx" | "html";

/** One page of extracted text; formats without pages give a single page numbered 1. */
export type ExtractedPage = {
    page: number,
    text: string
};

export type ExtractedDocument = {
    /** The file's base name as the user sees it (no folders). */
    name: string,
    format: DocumentFormat,
    /** Size of the original file in bytes. */
    bytes: number,
    pages: ExtractedPage[]
};

/** A file on this machine (desktop app, CLI) or bytes received from a client (web mode upload). */
export type DocumentSource =
    | {kind: "path", path: string}
    | {kind: "bytes", name: string, bytes: Uint8Array};

export type ExtractDocumentOptions = {
    /** Largest original file accepted; the default is `defaultMaxDocumentBytes`. */
    maxBytes?: number,
    /** Largest total a DOCX's parts may unpack to (a zip bomb's defence). Defaults to `defaultMaxInflatedBytes`. */
    maxInflatedBytes?: number,
    /** How long the extractor process may take for a PDF, DOCX or HTML file, start included. Defaults to `defaultExtractionTimeoutMs`. */
    timeoutMs?: number,
    /** The extractor process's JavaScript heap limit (MB); its resident memory may be twice that. Defaults to `defaultExtractorHeapMb`. */
    extractorHeapMb?: number,
    /** A process of its own per file (the default here), or a worker thread (the desktop core, where no process can be started). */
    extractorIsolation?: ExtractorIsolation,
    /** Hears what the extractor process used, once it answered (the benchmark reads it). */
    onExtractorUsage?: (usage: ExtractorUsage) => void,
    signal?: AbortSignal
};

/** A process of its own per file (the CLI, web mode), or a worker thread of the core's process (the desktop app). */
export type ExtractorIsolation = "process" | "worker";

export type ExtractorUsage = {
    /** The extractor process's peak resident memory. */
    maxRssBytes: number,
    /** From starting the process to its answer. */
    elapsedMs: number
};

export const defaultMaxDocumentBytes = 50 * 1024 * 1024;
export const defaultMaxInflatedBytes = 200 * 1024 * 1024;
export const defaultExtractionTimeoutMs = 30_000;
export const defaultExtractorHeapMb = 512;

export const attachmentUnreadableReasons = [
    "not-a-file",
    "too-large",
    "empty",
    "binary",
    "scanned-pdf",
    "encrypted-pdf",
    "corrupt",
    "inflated-too-large",
    "timeout",
    "extractor-crashed"
] as const;
export type AttachmentUnreadableReason = (typeof attachmentUnreadableReasons)[number];

/** A file that cannot become text in a conversation; nothing of it was stored or evaluated. */
export class AttachmentUnreadableError extends CleanroomError {
    public readonly reason: AttachmentUnreadableReason;
    /** The message without the file name in front (`message` is `${name}: ${problem}`). */
    public readonly problem: string;

    public constructor(name: string, reason: AttachmentUnreadableReason, message: string, details: Record<string, number | string> = {}) {
        super("ATTACHMENT_UNREADABLE", `${name}: ${message}`, {name, reason, ...details});
        this.name = "AttachmentUnreadableError";
        this.reason = reason;
        this.problem = message;
    }
}

import {CleanroomError} from "../../common/errors.js";

/**
 * A cloud turn that would send documents (those of the conversation, or those it brings) without
 * the user's say-so (`--send-attachments`): refused before anything is sent, naming each document and its size.
 */
export class CloudAttachmentsNotSentError extends CleanroomError {
    public constructor(documents: ReadonlyArray<{name: string, bytes: number}>) {
        super("CLOUD_ATTACHMENTS_UNCONFIRMED",
            `This cloud turn would send ${documents.length === 1 ? "a document" : `${documents.length} documents`} to the cloud: ` +
            `${documents.map((document) => `${document.name} (${document.bytes} bytes)`).join(", ")}. Nothing was sent. ` +
            "Send them only if you mean to (--send-attachments), or answer this turn locally.",
            {documents: documents.map((document) => ({name: document.name, bytes: document.bytes}))});
        this.name = "CloudAttachmentsNotSentError";
    }
}

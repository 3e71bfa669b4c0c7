import {CleanroomError, type ErrorCode, type ErrorDetails} from "../../common/errors.js";

export type ModelDownloadErrorCode = Extract<ErrorCode, `DOWNLOAD_${string}`>;

/** A download that was refused, failed, or did not verify. The message says which and by how much. */
export class ModelDownloadError extends CleanroomError {
    public override readonly code: ModelDownloadErrorCode;

    public constructor(code: ModelDownloadErrorCode, message: string, details: ErrorDetails = {}, cause?: unknown) {
        super(code, message, details, {cause});
        this.name = "ModelDownloadError";
        this.code = code;
    }
}

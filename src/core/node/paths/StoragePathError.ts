import {CleanroomError, type ErrorDetails} from "../../common/errors.js";

/**
 * A path that cannot hold what the core wants to keep there (the database, a models folder): a
 * kernel filesystem such as /proc, a part of the path that is a file, a folder that cannot be
 * created. The message names the path and the reason.
 */
export class StoragePathError extends CleanroomError {
    public override readonly code = "STORAGE_PATH_UNUSABLE";

    /** `what`: what the path was for ("the database"); `reason`: why it cannot be used, in words. */
    public constructor(what: string, targetPath: string, reason: string, details: ErrorDetails = {}, cause?: unknown) {
        super("STORAGE_PATH_UNUSABLE", `Cannot use ${targetPath} for ${what}: ${reason}.`, {path: targetPath, what, reason, ...details}, {cause});
        this.name = "StoragePathError";
    }
}

import {ModelNeededForSchema} from "../../src/core/common/api/index.js";
import {errorDetailOf, isCleanroomError} from "../../src/core/common/errors.js";

export type BannerKind = "error" | "warning" | "info";

/** A user-facing sentence for an error the core reported, keyed by its code. */
export function describeError(error: unknown): {title: string, detail: string, kind: BannerKind} {
    if (!isCleanroomError(error))
        return {title: "Something went wrong", detail: error instanceof Error ? error.message : String(error), kind: "error"};

    const {code, message} = error;
    if (code === "MODEL_CATALOG_INVALID" || code === "MODEL_REGISTRY_INVALID")
        return {title: code === "MODEL_CATALOG_INVALID" ? "The model catalog cannot be read" : "The list of your models cannot be read", detail: message, kind: "error"};
    if (code.startsWith("MODEL_") && code !== "MODEL_NOT_LOADED")
        return {title: "The model could not be loaded", detail: message, kind: "error"};
    switch (code) {
        case "DOWNLOAD_CHECKSUM_MISMATCH":
            return {title: "The download failed its checksum check and was deleted", detail: message, kind: "error"};
        case "DOWNLOAD_SIZE_MISMATCH":
            return {title: "The download was not the expected file", detail: message, kind: "error"};
        case "DISK_FULL":
            return {title: (error as {details?: {phase?: unknown}}).details?.phase === "during" ? "The disk filled up during the download" : "Not enough disk space for this download",
                detail: message, kind: "error"};
        case "UNLOCK_BACKOFF":
            return {title: "Wait before the next try", detail: message, kind: "warning"};
        case "DATABASE_IN_USE":
            return {title: "Another Cleanroom has this database open", detail: message, kind: "warning"};
        case "STORAGE_PATH_UNUSABLE":
            return {title: "That folder cannot be used", detail: message, kind: "error"};
        case "DOWNLOAD_FAILED":
            return {title: "The download failed", detail: message, kind: "error"};
        case "DOWNLOAD_STALLED":
            return {title: "The download stalled; what arrived is kept", detail: message, kind: "error"};
        case "DOWNLOAD_URL_REFUSED":
            return {title: "This download address is refused", detail: message, kind: "error"};
        case "DOWNLOAD_CANCELLED":
            return {title: "Download cancelled", detail: message, kind: "info"};
        case "MODELS_UNAVAILABLE":
            return {title: "Models cannot be managed here", detail: message, kind: "error"};
        case "MODEL_NOT_LOADED":
            return describeModelNotLoaded(error);
        case "CONTEXT_OVERFLOW":
            return {title: "This turn is too large for the model's context", detail: message, kind: "error"};
        case "CLOUD_BLOCKED":
            return {title: "A cloud reply was blocked", detail: message, kind: "error"};
        case "CLOUD_DISABLED":
            return {title: "This turn cannot go to the cloud", detail: message, kind: "warning"};
        case "CLOUD_OVER_LIMIT":
            return {title: "This turn is too large for the cloud endpoint", detail: message, kind: "error"};
        case "CLOUD_REQUEST_FAILED":
        case "CLOUD_BAD_RESPONSE":
            return {title: "The cloud request failed; nothing was kept", detail: message, kind: "error"};
        case "CLOUD_KEY_NEEDED":
            return {title: "Enter the cloud API key again", detail: message, kind: "warning"};
        case "SECRET_IN_CLOUD_REQUEST":
            return {title: "Not sent to the cloud: it holds likely secrets", detail: message, kind: "warning"};
        case "CLOUD_ENDPOINT_INSECURE":
            return {title: "This cloud endpoint is refused", detail: message, kind: "error"};
        case "SCRUB_UNVERIFIED":
            return {title: "Security fault: a scrub could not be verified", detail: message, kind: "error"};
        case "INVALID_INPUT":
            return {title: "Not accepted", detail: message, kind: "warning"};
        case "CONVERSATION_NOT_FOUND":
            return {title: "That conversation no longer exists", detail: message, kind: "warning"};
        case "MESSAGE_NOT_FOUND":
            return {title: "That message no longer exists", detail: message, kind: "warning"};
        default:
            return {title: (error as {details?: {disconnected?: unknown}}).details?.disconnected === true ? "Not connected to the core" : "The core reported an error", detail: message, kind: "error"};
    }
}

/** What to do depends on what the model was needed for (`details.neededFor`); without it, the core's own sentence. */
function describeModelNotLoaded(error: {message: string}): {title: string, detail: string, kind: BannerKind} {
    switch (errorDetailOf(error, "MODEL_NOT_LOADED", "neededFor", ModelNeededForSchema)) {
        case "chat":
            return {title: "No model is loaded", detail: "Choose a GGUF model in Settings → Local model (or Models…) to start chatting.", kind: "warning"};
        case "apiServer":
            return {title: "The local API server has no model to serve",
                detail: "Load a model first (Settings → Local model, or Models…), then turn the local API server on: it serves the model the app has loaded.",
                kind: "warning"};
        case "embeddings":
            return {title: "No embedding model is chosen",
                detail: "Choose an embedding model in Settings → Document search: the local API server embeds with that one.", kind: "warning"};
        case null:
            return {title: "No model is loaded", detail: error.message, kind: "warning"};
    }
}

import {isCleanroomError, toWireError} from "../core/common/errors.js";
import {OpenAiHttpError} from "./OpenAiHttpError.js";

/** The HTTP answer for a failure: the core's refusals by their code, anything else a 500. */
export function toHttpError(error: unknown, promptParam = "messages"): OpenAiHttpError {
    if (error instanceof OpenAiHttpError)
        return error;
    if (isCleanroomError(error, "CONTEXT_OVERFLOW"))
        return new OpenAiHttpError(400, "invalid_request_error", error.message, {param: promptParam, code: "context_length_exceeded"});
    if (isCleanroomError(error, "INVALID_INPUT"))
        return new OpenAiHttpError(400, "invalid_request_error", error.message, {param: typeof error.details.param === "string" ? error.details.param : null, code: "invalid_value"});
    if (isCleanroomError(error, "MODEL_NOT_LOADED"))
        return new OpenAiHttpError(503, "server_error", error.message, {code: "model_not_loaded"});
    if (isCleanroomError(error, "SCRUB_UNVERIFIED"))
        return new OpenAiHttpError(500, "server_error", error.message, {code: "scrub_unverified"});
    // Only Cleanroom's own codes and messages reach the client; anything else goes to the local log.
    const wire = toWireError(error);
    return new OpenAiHttpError(500, "server_error", `The request failed: ${wire.message}`, {code: wire.code === "INTERNAL" ? "internal_error" : null});
}

/** OpenAI's error `type`s this server answers with. */
export type OpenAiErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "server_error";

export type OpenAiErrorBody = {error: {message: string, type: OpenAiErrorType, param: string | null, code: string | null}};

/** An HTTP error in OpenAI's shape: `{error: {message, type, param, code}}` with its status. */
export class OpenAiHttpError extends Error {
    public readonly status: 400 | 401 | 403 | 404 | 413 | 429 | 500 | 503;
    public readonly type: OpenAiErrorType;
    public readonly param: string | null;
    public readonly code: string | null;
    /** Seconds, for a 429's `Retry-After`. */
    public readonly retryAfterSeconds: number | null;

    public constructor(status: OpenAiHttpError["status"], type: OpenAiErrorType, message: string,
        {param = null, code = null, retryAfterSeconds = null}: {param?: string | null, code?: string | null, retryAfterSeconds?: number | null} = {}) {
        super(message);
        this.name = "OpenAiHttpError";
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public toBody(): OpenAiErrorBody {
        return {error: {message: this.message, type: this.type, param: this.param, code: this.code}};
    }
}

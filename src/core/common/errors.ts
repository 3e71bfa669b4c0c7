import type * as z from "zod";
import type {ModelNeededForSchema} from "./api/recordedSchemas.js";
import type {SecretFinding} from "./secretScan/types.js";

/**
 * Every expected failure the core reports is a `CleanroomError` with a stable `code`.
 * Receivers on the other side of a process or socket branch on `code`, never on `instanceof`.
 * Messages say what happened and by how much; they never carry prompt text, canaries or
 * model output.
 *
 * This list is the one source of the codes: `ErrorCode` is derived from it, and `toWireError`
 * lets only these cross a boundary. A new code is one more entry here.
 */
export const errorCodes = [
    "MODEL_NOT_FOUND",
    "MODEL_FILE_MISSING",
    "MODEL_NOT_GGUF",
    "MODEL_TRUNCATED",
    "MODEL_UNSUPPORTED_ARCHITECTURE",
    "MODEL_TOO_LARGE_FOR_MEMORY",
    "MODEL_LOAD_FAILED",
    "MODEL_NOT_LOADED",
    "GPU_UNAVAILABLE",
    "CONTEXT_OVERFLOW",
    "CONTEXT_OWNERSHIP",
    "CONTEXT_DISPOSED",
    "POOL_BUDGET_TOO_SMALL",
    "SCRUB_UNVERIFIED",
    "CONVERSATION_NOT_FOUND",
    "MESSAGE_NOT_FOUND",
    "GENERATION_ABORTED",
    "INVALID_INPUT",
    "CLOUD_DISABLED",
    "CLOUD_BLOCKED",
    "CLOUD_REQUEST_FAILED",
    "CLOUD_OVER_LIMIT",
    "CLOUD_BAD_RESPONSE",
    "CLOUD_KEY_NEEDED",
    "CLOUD_ENDPOINT_INSECURE",
    "SECRET_IN_CLOUD_REQUEST",
    "DOWNLOAD_FAILED",
    "DOWNLOAD_CHECKSUM_MISMATCH",
    "DOWNLOAD_SIZE_MISMATCH",
    "DOWNLOAD_CANCELLED",
    "DOWNLOAD_STALLED",
    "DOWNLOAD_URL_REFUSED",
    "DISK_FULL",
    "STORAGE_PATH_UNUSABLE",
    "WRONG_PASSPHRASE",
    "PASSPHRASE_REQUIRED",
    "STORE_KEY_UNAVAILABLE",
    "KEY_FILE_DAMAGED",
    "DATABASE_DAMAGED",
    "DATABASE_TOO_NEW",
    "STORE_LOCKED",
    "UNLOCK_BACKOFF",
    "DATABASE_IN_USE",
    "MODEL_CATALOG_INVALID",
    "MODEL_REGISTRY_INVALID",
    "MODELS_UNAVAILABLE",
    "UNAUTHORIZED",
    "ATTACHMENT_UNREADABLE",
    "CLOUD_ATTACHMENTS_UNCONFIRMED",
    "PASSAGE_NOT_FOUND",
    "PORT_IN_USE",
    "ENGINE_BUILD_TOOLS_MISSING",
    "ENGINE_BUILD_FAILED",
    "ENGINE_BUILD_CANCELLED",
    "ENGINE_BUILD_RUNNING",
    "INTERNAL"
] as const;

export type ErrorCode = typeof errorCodes[number];

const knownErrorCodes: ReadonlySet<string> = new Set(errorCodes);

export function isErrorCode(value: unknown): value is ErrorCode {
    return typeof value === "string" && knownErrorCodes.has(value);
}

export type ErrorDetailValue = number | string | boolean | null;
/** Flat values, or a list of flat records (e.g. the findings of `SecretInCloudRequestError`). */
export type ErrorDetails = Record<string, ErrorDetailValue | Array<Record<string, ErrorDetailValue>>>;

export type WireError = {
    code: ErrorCode,
    message: string,
    details: ErrorDetails
};

export class CleanroomError extends Error {
    public readonly code: ErrorCode;
    public readonly details: ErrorDetails;

    public constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: {cause?: unknown}) {
        super(message, options);
        this.name = "CleanroomError";
        this.code = code;
        this.details = details;
    }

    public toWire(): WireError {
        return {code: this.code, message: this.message, details: this.details};
    }
}

export class ModelLoadError extends CleanroomError {
    public constructor(code: Extract<ErrorCode, `MODEL_${string}`>, message: string, details: ErrorDetails = {}, cause?: unknown) {
        super(code, message, details, {cause});
        this.name = "ModelLoadError";
    }
}

/** What a `ModelNotLoadedError` found missing (`ModelNeededForSchema`). */
export type ModelNeededFor = z.infer<typeof ModelNeededForSchema>;

/** `MODEL_NOT_LOADED`, with `details.neededFor`: receivers tell the user what to do for that use of a model. */
export class ModelNotLoadedError extends CleanroomError {
    public constructor(neededFor: ModelNeededFor, message: string) {
        super("MODEL_NOT_LOADED", message, {neededFor});
        this.name = "ModelNotLoadedError";
    }
}

export class ContextOverflowError extends CleanroomError {
    public readonly neededTokens: number;
    public readonly contextSize: number;
    /** Its details, typed: what the audit log records of a refused turn. */
    public readonly overflow: {promptTokens: number, replyBudget: number, neededTokens: number, contextSize: number, overBy: number};

    public constructor(promptTokens: number, replyBudget: number, contextSize: number) {
        const needed = promptTokens + replyBudget;
        const overflow = {promptTokens, replyBudget, neededTokens: needed, contextSize, overBy: needed - contextSize};
        super(
            "CONTEXT_OVERFLOW",
            `This turn needs ${needed} tokens (${promptTokens} prompt + ${replyBudget} reply budget) ` +
            `but the context holds ${contextSize}: ${needed - contextSize} over. Nothing was evaluated.`,
            {...overflow}
        );
        this.overflow = overflow;
        this.name = "ContextOverflowError";
        this.neededTokens = needed;
        this.contextSize = contextSize;
    }
}

export class ContextOwnershipError extends CleanroomError {
    public constructor(contextId: string, ownerLabel: string, requesterLabel: string) {
        super(
            "CONTEXT_OWNERSHIP",
            `Context ${contextId} belongs to conversation ${ownerLabel} and cannot serve conversation ${requesterLabel}.`,
            {contextId, owner: ownerLabel, requester: requesterLabel}
        );
        this.name = "ContextOwnershipError";
    }
}

/** The stored cloud key was given for another endpoint (origin) than the one set now: it is never sent there. */
export class CloudKeyNeededError extends CleanroomError {
    /**
     * @param endpointOrigin the origin of the endpoint set now, or null when none is
     * @param keyOrigin the origin the stored key was given for; null for a key stored before keys were bound to one
     */
    public constructor(endpointOrigin: string | null, keyOrigin: string | null) {
        super(
            "CLOUD_KEY_NEEDED",
            keyOrigin == null
                ? "The stored cloud API key was saved before keys were tied to an endpoint, so it is not used: enter the key again."
                : `The stored cloud API key was given for ${keyOrigin}` +
                    (endpointOrigin == null ? ", and no cloud endpoint is set now." : `, and the cloud endpoint is now ${endpointOrigin}.`) +
                    " A key is never sent to another endpoint: enter the key again for this one.",
            {endpoint: endpointOrigin, keyOrigin}
        );
        this.name = "CloudKeyNeededError";
    }
}

/** A cloud endpoint that would carry the key and the messages unencrypted over the network (`cloudEndpointProblem`). */
export class InsecureCloudEndpointError extends CleanroomError {
    public constructor(problem: string) {
        super("CLOUD_ENDPOINT_INSECURE", `Refused: ${problem}.`);
        this.name = "InsecureCloudEndpointError";
    }
}

/**
 * A cloud request that holds secrets (keys, passwords, card numbers, the user's own phrases) is
 * not sent: not a byte of it. `details.findings` lists each by kind, place and a masked preview;
 * the values are in no field, message or stack.
 */
export class SecretInCloudRequestError extends CleanroomError {
    public readonly findings: readonly SecretFinding[];

    public constructor(findings: readonly SecretFinding[]) {
        const listed = findings.slice(0, 5).map((finding) => `${finding.kind} (${finding.where}, line ${finding.line})`);
        const more = findings.length > listed.length ? `, and ${findings.length - listed.length} more` : "";
        super(
            "SECRET_IN_CLOUD_REQUEST",
            `Not sent to the cloud: this request holds ${findings.length === 1 ? "a likely secret" : `${findings.length} likely secrets`}: ` +
            `${listed.join(", ")}${more}. Nothing was sent. Send them redacted, answer locally, or remove them.`,
            {count: findings.length, findings: findings.map((finding) => ({...finding}))}
        );
        this.name = "SecretInCloudRequestError";
        this.findings = findings;
    }
}

/**
 * A session's KV scrub could not be verified (cells read back non-zero, or the read-back failed).
 * The context is discarded, never reused; every front end shows this message, the CLI exits 4.
 */
export class ScrubUnverifiedError extends CleanroomError {
    public readonly contextId: string;

    public constructor({contextId, failure, nonZeroBytes}: {contextId: string, failure: string | null, nonZeroBytes: number}, cause?: unknown) {
        const reason = failure ?? `${nonZeroBytes} non-zero bytes read back`;
        super(
            "SCRUB_UNVERIFIED",
            `Security fault: the KV scrub of context ${contextId} could not be verified (${reason}). ` +
            "The context was discarded and will not be reused.",
            {contextId, reason, nonZeroBytes},
            {cause}
        );
        this.name = "ScrubUnverifiedError";
        this.contextId = contextId;
    }
}

export class InvalidInputError extends CleanroomError {
    public constructor(where: string, problems: string[]) {
        super("INVALID_INPUT", `Invalid input to ${where}: ${problems.join("; ")}`, {where, problems: problems.join("; ")});
        this.name = "InvalidInputError";
    }
}

/** A `CleanroomError`, or its wire form: an object whose `code` is one of `errorCodes`. */
export function isCleanroomError<C extends ErrorCode>(error: unknown, code?: C): error is WireError & {code: C} {
    if (typeof error !== "object" || error === null)
        return false;

    const errorCode = (error as {code?: unknown}).code;
    return isErrorCode(errorCode) && (code == null || errorCode === code);
}

/**
 * One detail of an error with `code`, read through `schema`: what a receiver shows the user beside
 * the message (the secrets found, the documents a cloud turn would send). Null for any other error
 * or a detail of the wrong shape.
 */
export function errorDetailOf<T>(error: unknown, code: ErrorCode, key: string, schema: z.ZodType<T>): T | null {
    if (!isCleanroomError(error, code))
        return null;
    const parsed = schema.safeParse((error as {details?: Record<string, unknown>}).details?.[key]);
    return parsed.success ? parsed.data : null;
}

/** What any error that is not a `CleanroomError` becomes on the other side of a boundary. */
export const internalErrorMessage = "Cleanroom ran into an internal error. The details are in its local log; nothing more was sent here.";

/**
 * An error as the local log shows it: its class, its own code (an errno such as `ENOENT`, a
 * `SQLITE_*` code) and its message, which may hold file paths. Never sent across a boundary.
 */
export function describeErrorLocally(error: unknown): string {
    if (!(error instanceof Error))
        return `a thrown ${error === null ? "null" : typeof error}: ${String(error)}`;
    const ownCode = (error as {code?: unknown}).code;
    return `${error.name}${typeof ownCode === "string" || typeof ownCode === "number" ? ` [${ownCode}]` : ""}: ${error.message}`;
}

/** The local log of the process at hand: the core's (or CLI's) stderr, the preload's console. */
function logLocally(detail: string) {
    console.error(`cleanroom: internal error, kept out of the reply: ${detail}`);
}

/**
 * The form of `error` that may cross a process or socket boundary. Only the codes of `errorCodes`
 * cross, with their message and details; anything else (an fs error with its path, a SQLite
 * error, a plain `Error`) crosses as `INTERNAL` with `internalErrorMessage`, and its detail
 * (`describeErrorLocally`) goes to `log`, by default the local log.
 */
export function toWireError(error: unknown, log: (detail: string) => void = logLocally): WireError {
    if (error instanceof CleanroomError && isErrorCode(error.code))
        return error.toWire();

    if (isCleanroomError(error) && typeof error.message === "string")
        return {code: error.code, message: error.message, details: error.details ?? {}};

    log(describeErrorLocally(error));
    return {code: "INTERNAL", message: internalErrorMessage, details: {}};
}

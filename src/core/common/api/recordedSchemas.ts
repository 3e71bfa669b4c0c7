import * as z from "zod";
import {errorCodes} from "../errors.js";
import {CloudVerdictKindSchema, SessionEndReasonSchema} from "../types.js";

/**
 * Shapes that the audit log records and the API returns alike. They live apart from `schemas.ts`
 * (which re-exports them) because `auditEvents.ts` needs them and `schemas.ts` needs the audit union.
 */

/** An error as it crosses a boundary (`toWireError`): its code is one of `errorCodes`, so a new code must be declared there. */
export const WireErrorSchema = z.object({
    code: z.enum(errorCodes),
    message: z.string(),
    details: z.record(z.string(), z.union([
        z.number(), z.string(), z.boolean(), z.null(),
        z.array(z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])))
    ]))
});

/**
 * What a `MODEL_NOT_LOADED` error found missing (its `details.neededFor`), so that each receiver can say
 * what to do there: a local chat turn's model, the model the app's local API server serves, or the
 * embedding model of `POST /v1/embeddings`.
 */
export const ModelNeededForSchema = z.enum(["chat", "apiServer", "embeddings"]);

/** Why a cloud reply was blocked or flagged. Holds kinds, offsets and lengths: never the text. */
export const CloudVerdictSchema = z.object({
    kind: CloudVerdictKindSchema,
    blocked: z.boolean(),
    detail: z.string(),
    findings: z.array(z.object({kind: z.string(), start: z.number().int(), end: z.number().int()}))
});

export const ScrubReportSchema = z.object({
    contextId: z.string(),
    kvCells: z.number().int(),
    layers: z.number().int(),
    /** Bytes of K/V payload written as zeros. */
    bytesZeroed: z.number(),
    /** Bytes of K/V payload read back and checked. */
    bytesChecked: z.number(),
    nonZeroBytes: z.number(),
    cellsReadBack: z.number().int(),
    verified: z.boolean(),
    durationMs: z.number(),
    reason: SessionEndReasonSchema,
    /**
     * Where the KV layout the scrub used came from: learned at model load, cached by an earlier load
     * (proved again by this scrub), or learned again because this scrub contradicted the cached one.
     * Absent from scrubs recorded before the KV layout was cached.
     */
    layoutSource: z.enum(["learned", "cached", "relearned"]).optional(),
    /**
     * `no-kv-memory`: the context kept no KV memory (an encoder such as BERT, as an embedding context):
     * nothing to zero, and its state read back held no byte after its cleared token list. Absent: every
     * KV cell was zeroed and read back.
     */
    method: z.literal("no-kv-memory").optional()
});

export const DroppedHistorySchema = z.object({
    /** Messages left out of the model's window by the `drop-oldest` policy (still kept in the database). */
    droppedMessages: z.number().int(),
    droppedTokens: z.number().int()
});

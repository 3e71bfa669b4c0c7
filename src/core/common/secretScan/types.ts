import * as z from "zod";
import {SecretKindIdSchema, type SecretKindId} from "./secretKinds.js";

/** One secret found in one text: its kind and where its value stands (`text.slice(start, end)`). */
export type SecretMatch = {kind: SecretKindId, start: number, end: number};

/**
 * One secret found in a cloud request, as errors, results and the CLI report it: never the value.
 * `where`: "the system prompt", "history message 3" (1-based, oldest first) or "the prompt";
 * `line`: 1-based, in that message.
 */
export const SecretFindingSchema = z.object({
    kind: z.string(),
    kindId: SecretKindIdSchema,
    where: z.string(),
    /** The message's index in the request (0: the system prompt when there is one). */
    message: z.number().int(),
    role: z.enum(["system", "user", "assistant"]),
    line: z.number().int(),
    /** The value masked: its first and last 4 characters when it is long (`AKIA…XYZ4`), else `••••••••`. */
    preview: z.string()
});
export type SecretFinding = z.infer<typeof SecretFindingSchema>;

/**
 * What a cloud turn does with secrets found in what it would send. Without it, any secret
 * stops the request before a byte is sent (`SECRET_IN_CLOUD_REQUEST`).
 */
export const CloudSecretsOptionsSchema = z.strictObject({
    /** Send each value replaced by a typed placeholder (`[AWS access key 1]`), put back in the reply. Defaults to `false`. */
    redact: z.boolean().optional(),
    /** Kinds sent as they are, for this turn, by id (`aws-access-key`, `card-number`, …). Defaults to none. */
    allow: z.array(SecretKindIdSchema).max(50).optional()
});
export type CloudSecretsOptions = z.infer<typeof CloudSecretsOptionsSchema>;

/** How many secrets of each kind (by name), for the audit: never a value, a preview or a place. */
export type SecretKindCounts = Record<string, number>;

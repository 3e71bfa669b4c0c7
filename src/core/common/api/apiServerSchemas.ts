import * as z from "zod";
import {ScrubReportSchema, WireErrorSchema} from "./schemas.js";

/** The port the app's local API server listens on unless another is chosen (as `cleanroom serve`'s). */
export const defaultLocalApiPort = 1234;

/** A port for the local API server; `0` picks a free one. */
export const LocalApiPortSchema = z.number().int().min(0, "a port from 0 (any free one) to 65535").max(65_535, "a port from 0 (any free one) to 65535");

/** A stored API key as lists show it: never the key, never its hash. */
export const ApiKeyInfoSchema = z.object({id: z.string(), label: z.string(), createdAt: z.number()});

export const ApiKeyLabelSchema = z.string().trim().min(1, "a label cannot be empty").max(60, "a label has at most 60 characters")
    .regex(/^[^\p{Cc}]+$/u, "a label without control characters");

export const ApiKeyIdSchema = z.string().length(36, "a key id from apiKeys.list")
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "a key id from apiKeys.list");

/** Whether the app's local API server runs, where, and what it serves. */
export const LocalApiServerStatusSchema = z.object({
    running: z.boolean(),
    /** The port it listens on (running), else the one it would take. */
    port: z.number().int(),
    /** `http://127.0.0.1:<port>/v1`, the base URL OpenAI clients take. */
    baseUrl: z.string(),
    /** The loaded model's name as clients ask for it (its file name without `.gguf`); null without a model. */
    modelName: z.string().nullable(),
    /** Stored keys. */
    keys: z.number().int(),
    /**
     * Whether a request needs a key. False only while no key has guarded the running server: then any program on
     * this machine may call it (loopback only, `Host` checked). Once a key has, revoking every key does not open it: it
     * refuses every request until it is turned off and on again.
     */
    keyRequired: z.boolean(),
    /** Whether the user last turned it on: then it starts again with the app (once a model is loaded), on the same port. */
    startsWithApp: z.boolean(),
    /** Why it is off although it was on when the app last closed: it could not start again (its port taken, say). Null otherwise. */
    startProblem: WireErrorSchema.nullable(),
    /** The endpoints it serves while it runs (`GET /v1/models`, …), read from its route table; empty while it is off. */
    endpoints: z.array(z.string())
});

/** One request the local API server ran (or refused), as the Isolation panel lists it. */
export const ApiSessionSchema = z.object({
    requestId: z.string(),
    /** The API key's label, or `loopback` when the server has no keys. */
    tenant: z.string(),
    /** The API key's id (as `apiKeys.list` gives it; `key 1` for `cleanroom serve`'s first `--api-key`): two keys may share a label. Null for `loopback`, and for requests recorded before ids were. */
    keyId: z.string().nullable(),
    /** What was asked: a chat or text completion, or embeddings; null for requests recorded before this was. */
    kind: z.enum(["chat", "text", "embeddings"]).nullable(),
    at: z.number(),
    outcome: z.enum(["running", "answered", "failed", "refused"]),
    promptTokens: z.number().int().nullable(),
    completionTokens: z.number().int().nullable(),
    /** Embeddings: the vectors answered, one per input. */
    vectors: z.number().int().nullable(),
    /** The context the request ran in; null when it never had one (refused before evaluation). */
    contextId: z.string().nullable(),
    /** Set when the request ran in its key and `cache_salt`'s reuse cache (scrubbed when that idles out, not with the request). */
    cacheSession: z.string().nullable(),
    scrub: ScrubReportSchema.extend({at: z.number()}).nullable()
});

export type LocalApiServerStatus = z.infer<typeof LocalApiServerStatusSchema>;
export type ApiKeyInfoWire = z.infer<typeof ApiKeyInfoSchema>;
export type ApiSession = z.infer<typeof ApiSessionSchema>;

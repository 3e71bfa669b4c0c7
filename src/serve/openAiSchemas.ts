import * as z from "zod";
import {MaxTokensSchema, SeedSchema, TemperatureSchema} from "../core/common/api/limits.js";

/**
 * The request bodies `cleanroom serve` accepts, in OpenAI's shapes. Fields it cannot honour are
 * refused by name rather than ignored (a client asking for tools or several choices must not get
 * an answer that silently lacks them); fields that change nothing here (`user`, `stream_options`
 * aside) are accepted.
 */

const TextPartSchema = z.object({type: z.literal("text"), text: z.string()});

/** A message's content: a string, or a list of text parts (images and audio are not supported). */
const ContentSchema = z.union([
    z.string(),
    z.array(z.union([TextPartSchema, z.looseObject({type: z.string()}).refine(() => false, {message: "only text parts are supported"})])).min(1)
]);

const MessageSchema = z.discriminatedUnion("role", [
    z.object({role: z.literal("system"), content: ContentSchema, name: z.string().optional()}),
    z.object({role: z.literal("developer"), content: ContentSchema, name: z.string().optional()}),
    z.object({role: z.literal("user"), content: ContentSchema, name: z.string().optional()}),
    z.object({role: z.literal("assistant"), content: ContentSchema, name: z.string().optional()})
], {error: "a message's role must be system, developer, user or assistant (tool messages are not supported)"});

/** Free text, any JSON, or JSON matching a schema (node-llama-cpp's JSON-schema grammar decides which schemas it can follow). */
const ResponseFormatSchema = z.discriminatedUnion("type", [
    z.object({type: z.literal("text")}),
    z.object({type: z.literal("json_object")}),
    z.object({type: z.literal("json_schema"), json_schema: z.object({
        name: z.string().min(1).max(64),
        description: z.string().optional(),
        schema: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullish()
    })})
], {error: "response_format's type must be text, json_object or json_schema"});

const StopSchema = z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]);

/** Refused when present with anything but the value that changes nothing. */
const unsupported = <T extends z.ZodType>(schema: T, neutral: (value: z.infer<T>) => boolean, why: string) =>
    schema.optional().refine((value) => value == null || neutral(value), {message: why});

/** The fields both completion endpoints take alike. */
const commonFields = {
    model: z.string().min(1),
    stream: z.boolean().nullish(),
    stream_options: z.object({include_usage: z.boolean().nullish()}).nullish(),
    max_tokens: MaxTokensSchema.nullish(),
    temperature: TemperatureSchema.nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    seed: SeedSchema.nullish(),
    /** vLLM's field: requests of one API key with the same salt may share their prompt's cache; none without it. */
    cache_salt: z.string().min(1, "cache_salt cannot be empty").max(256, "cache_salt has at most 256 characters").nullish(),
    stop: StopSchema.nullish(),
    user: z.string().nullish(),
    n: unsupported(z.number().int().nullable(), (n) => n == null || n === 1, "only n = 1 is supported"),
    presence_penalty: unsupported(z.number().nullable(), (value) => value == null || value === 0, "presence_penalty is not supported"),
    frequency_penalty: unsupported(z.number().nullable(), (value) => value == null || value === 0, "frequency_penalty is not supported")
};

export const ChatCompletionBodySchema = z.object({
    ...commonFields,
    messages: z.array(MessageSchema).min(1, "messages cannot be empty").max(1000),
    max_completion_tokens: MaxTokensSchema.nullish(),
    tools: unsupported(z.array(z.unknown()).nullable(), (tools) => tools == null || tools.length === 0, "tools are not supported"),
    logprobs: unsupported(z.boolean().nullable(), (logprobs) => logprobs !== true, "logprobs are not supported"),
    response_format: ResponseFormatSchema.nullish()
});
export type ChatCompletionBody = z.infer<typeof ChatCompletionBodySchema>;

/** The text of a message's content, its parts joined. */
export function textOfContent(content: ChatCompletionBody["messages"][number]["content"]): string {
    return typeof content === "string" ? content : content.map((part) => "text" in part ? part.text : "").join("");
}

/** `POST /v1/completions`: a raw text prompt (one), continued with no chat template. */
export const CompletionBodySchema = z.object({
    ...commonFields,
    prompt: z.union([z.string().min(1, "a prompt cannot be empty"), z.tuple([z.string().min(1, "a prompt cannot be empty")])],
        {error: "prompt must be one non-empty string (several prompts in one request are not supported)"}),
    echo: unsupported(z.boolean().nullable(), (echo) => echo !== true, "echo is not supported"),
    logprobs: unsupported(z.number().int().nullable(), (logprobs) => logprobs == null, "logprobs are not supported"),
    best_of: unsupported(z.number().int().nullable(), (bestOf) => bestOf == null || bestOf === 1, "only best_of = 1 is supported"),
    suffix: unsupported(z.string().nullable(), (suffix) => suffix == null || suffix === "", "suffix is not supported")
});
export type CompletionBody = z.infer<typeof CompletionBodySchema>;

/** Texts one `/v1/embeddings` request may hold (OpenAI's limit). */
export const maxEmbeddingInputs = 2048;

/**
 * `POST /v1/embeddings`: one text or a list of them (token arrays are refused by name), as float
 * lists or base64 (the float32 bytes, little-endian, as OpenAI sends them).
 */
export const EmbeddingBodySchema = z.object({
    model: z.string().min(1),
    input: z.union([
        z.string().min(1, "an input cannot be empty"),
        z.array(z.string().min(1, "an input cannot be empty")).min(1, "input cannot be an empty list").max(maxEmbeddingInputs, `input holds at most ${maxEmbeddingInputs} texts`)
    ], {error: "input must be a non-empty string or a list of them (token arrays are not supported)"}),
    encoding_format: z.enum(["float", "base64"], {error: "encoding_format must be float or base64"}).nullish(),
    dimensions: unsupported(z.number().int().nullable(), (dimensions) => dimensions == null, "dimensions is not supported: the vectors have the model's own size"),
    user: z.string().nullish()
});
export type EmbeddingBody = z.infer<typeof EmbeddingBodySchema>;

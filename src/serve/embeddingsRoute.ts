import type {Context} from "hono";
import type {Core} from "../core/node/Core.js";
import {vectorToBlob} from "../core/node/documents/chunkVectors.js";
import type {ApiEmbeddingResult} from "../core/node/turns/ApiEmbeddingService.js";
import type {ApiTenant} from "../core/node/turns/ApiRequestService.js";
import {EmbeddingBodySchema} from "./openAiSchemas.js";
import {OpenAiHttpError} from "./OpenAiHttpError.js";
import {parseBody} from "./parseBody.js";
import {toHttpError} from "./toHttpError.js";

/**
 * `POST /v1/embeddings`, in OpenAI's shape: the texts embedded by the chosen embedding model, each
 * request in an embedding context of its own, scrubbed before the answer is sent (`Core.embedForApi`).
 * A request takes a slot like a completion (429 when none is free); an input longer than the model
 * reads whole is refused with 400 `context_length_exceeded`, before anything is evaluated.
 */
export function embeddingsRoute(core: Core, takeSlot: (tenant: ApiTenant) => {release: () => void}, onEmbedded?: (result: ApiEmbeddingResult, tenant: string) => void) {
    return async (c: Context<{Variables: {tenant: ApiTenant}}>) => {
        const body = parseBody(await c.req.text(), EmbeddingBodySchema);
        const served = core.apiEmbeddingModelName;
        if (served == null)
            throw new OpenAiHttpError(404, "invalid_request_error",
                "This server has no embedding model: start it with `cleanroom serve --embedding-model <gguf>`, " +
                "or choose one with `cleanroom settings embedding-model set <gguf>` (the choice the app's documents use too).",
                {param: "model", code: "model_not_found"});
        if (body.model !== served)
            throw new OpenAiHttpError(404, "invalid_request_error",
                `The model ${JSON.stringify(body.model)} does not exist here: this server embeds with ${JSON.stringify(served)}.`, {param: "model", code: "model_not_found"});
        const tenant = c.get("tenant");
        const texts = typeof body.input === "string" ? [body.input] : body.input;
        const slot = takeSlot(tenant);
        try {
            const result = await core.embedForApi({tenant, texts}).catch((error: unknown) => {
                throw toHttpError(error, "input");
            });
            onEmbedded?.(result, tenant.label);
            return c.json({
                object: "list",
                data: result.vectors.map((vector, index) => ({
                    object: "embedding", index,
                    embedding: body.encoding_format === "base64" ? vectorToBlob(vector).toString("base64") : Array.from(vector)
                })),
                model: served,
                usage: {prompt_tokens: result.promptTokens, total_tokens: result.promptTokens}
            });
        } finally {
            slot.release();
        }
    };
}

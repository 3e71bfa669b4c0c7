import crypto from "node:crypto";
import {CleanroomError, ModelNotLoadedError} from "../../common/errors.js";
import type {AuditLog} from "../audit/AuditLog.js";
import type {EmbeddingScrub} from "../documents/embedding/DocumentEmbedder.js";
import type {EmbeddingModelChoice} from "../documents/embedding/EmbeddingModelChoice.js";
import {recordEmbeddingScrub} from "../documents/embedding/recordEmbeddingScrub.js";
import {apiModelName} from "../serving/apiModelName.js";
import {auditedTenant, type ApiTenant} from "./ApiRequestService.js";

export type ApiEmbeddingInput = {
    /** Who asks: a label for the API key, or `loopback` without keys. Never the key itself. */
    tenant: ApiTenant,
    texts: readonly string[]
};

export type ApiEmbeddingResult = {
    requestId: string,
    /** One unit vector per text, in order. */
    vectors: Float32Array[],
    /** The texts' tokens as the model reads them. */
    promptTokens: number,
    /** The scrub that ended the request's embedding context (verified: an unverified one is thrown). */
    scrub: EmbeddingScrub
};

/**
 * `POST /v1/embeddings` of the local API server: each request's texts are embedded in an
 * embedding context of its own (`DocumentEmbedder.embed`), ended by its scrub before the answer
 * is given, so nothing passes from one request (or key) to another. A text longer than the model
 * reads whole is refused before anything is evaluated (`CONTEXT_OVERFLOW`, recorded as
 * `api.refused`), never cut silently.
 */
export class ApiEmbeddingService {
    private readonly _embeddings: EmbeddingModelChoice;
    private readonly _audit: AuditLog;

    public constructor(embeddings: EmbeddingModelChoice, audit: AuditLog) {
        this._embeddings = embeddings;
        this._audit = audit;
    }

    /** The name the embedding model is listed and asked for under (its file name without `.gguf`); null when none is chosen. */
    public get modelName(): string | null {
        const path = this._embeddings.path;
        return path == null ? null : apiModelName(path);
    }

    public async embed({tenant, texts}: ApiEmbeddingInput): Promise<ApiEmbeddingResult> {
        const embedder = await this._embeddings.current();
        if (embedder == null)
            throw new ModelNotLoadedError("embeddings",
                "No embedding model is chosen: start `cleanroom serve --embedding-model <gguf>`, or choose one with `cleanroom settings embedding-model set <gguf>`.");
        const requestId = `api-${crypto.randomBytes(8).toString("hex")}`;
        const counts = texts.map((text) => embedder.countTokens(text));
        const longest = counts.reduce((worst, count, index) => count > counts[worst]! ? index : worst, 0);
        const limit = embedder.maxInputTokens;
        if (counts[longest]! > limit) {
            const tokens = counts[longest]!;
            this._audit.record({kind: "api.refused", conversationId: requestId, data: {
                ...auditedTenant(tenant), kind: "embeddings", promptTokens: tokens, replyBudget: 0, neededTokens: tokens, contextSize: limit, overBy: tokens - limit
            }});
            throw new CleanroomError("CONTEXT_OVERFLOW",
                `Input ${longest} has ${tokens} tokens, and the embedding model reads at most ${limit} of one input: ${tokens - limit} over. Nothing was evaluated.`,
                {input: longest, tokens, maxTokens: limit, overBy: tokens - limit});
        }
        const promptTokens = counts.reduce((sum, count) => sum + count, 0);
        // Listed in the Isolation panel's API sessions like a completion: the request, its context's scrub, its answer.
        this._audit.record({kind: "api.request", conversationId: requestId, data: {...auditedTenant(tenant), kind: "embeddings", promptTokens, maxTokens: 0}});
        const {vectors, scrub} = await embedder.embed(texts);
        recordEmbeddingScrub(this._audit, requestId, scrub);
        this._audit.record({kind: "api.answered", conversationId: requestId, data: {
            ...auditedTenant(tenant), kind: "embeddings", finishReason: "stop", promptTokens, completionTokens: 0, cachedTokens: 0, vectors: vectors.length
        }});
        return {requestId, vectors, promptTokens, scrub};
    }
}

import {ContextOverflowError} from "../../common/errors.js";
import type {ConversationId, TurnAttachment} from "../../common/types.js";
import type {PreparedPrompt} from "../engine/LocalEngine.js";
import type {AttachmentStore, NewAttachment, PendingDocument, QueryEmbedding} from "./AttachmentStore.js";
import {chunkDocument} from "./chunkDocument.js";
import {passagesBlock, userTurnWithDocuments, wholeDocumentBlock, type RetrievedPassage} from "./documentPrompt.js";
import type {ExtractedDocument} from "./extraction/types.js";
import type {EmbeddingBatch, EmbeddingScrub} from "./embedding/DocumentEmbedder.js";

/** What retrieval needs of an embedding model (`DocumentEmbedder`). */
export type TurnEmbedder = {modelId: string, embed: (texts: readonly string[]) => Promise<EmbeddingBatch>};

/** At most this many retrieved passages go into one turn. */
export const maxPassagesPerTurn = 6;
/** A chunk's size in the model's tokens, where the context leaves room for several. */
const chunkTargetTokens = 300;
/** No chunk is cut smaller than this, however small the context: a passage should hold a few lines. */
const minChunkChars = 200;

export type DocumentTurnPlan = {
    /** The user turn as the model is given it: documents and passages, then the typed text. */
    userText: string,
    prepared: PreparedPrompt,
    /** The documents this turn brought, as they are stored with its user message once it is accepted. */
    attachments: NewAttachment[],
    /** The passages retrieved for this turn, best first. */
    passages: RetrievedPassage[],
    /** The scrub of the embedding context this turn used (the query and its new chunks embedded); null without one. */
    embeddingScrub: EmbeddingScrub | null,
    /**
     * Vectors this turn gave to the conversation's stored chunks that had none by the chosen model
     * (documents brought before it was chosen, or under another): embedded in the turn's embedding
     * context, and stored before the passages are ranked. 0 without an embedding model.
     */
    backfilledVectors: number
};

export type PlanDocumentTurnInput = {
    conversationId: ConversationId,
    /** What the user typed. */
    text: string,
    /** Documents this turn brings, already extracted. */
    attached: readonly ExtractedDocument[],
    /** Whether the conversation already holds documents retrieved chunk by chunk. */
    hasRetrieved: boolean,
    contextSize: number,
    /** Builds and checks the prompt for a user turn (`LocalEngine.preparePrompt` with the turn's history and settings). */
    prepare: (userText: string) => PreparedPrompt,
    countTokens: (text: string) => number,
    attachments: AttachmentStore,
    /** The chosen embedding model, if any: retrieval then fuses BM25 with the vectors' cosine similarity. Defaults to none (BM25 alone). */
    embedder?: () => Promise<TurnEmbedder | null>
};

/**
 * Fit or retrieve: each document this turn brings goes in whole while it fits beside the history
 * and the reply budget; one that does not is chunked and retrieved. The conversation's retrieved
 * documents (stored, and those of this turn) give their best-matching chunks for the typed text,
 * as many as fit. A turn whose retrieved documents cannot give even one passage is refused
 * (CONTEXT_OVERFLOW, by how much), as a prompt too long for the context is: before anything is
 * stored or evaluated. With an embedding model, the typed text and this turn's new chunks are
 * embedded (in one embedding context, scrubbed before this returns) and the chunks' vectors kept
 * with the documents; so are the conversation's stored chunks that have no vector by that model yet
 * (backfilled lazily, by the first retrieval that needs them: `backfilledVectors`). A query whose
 * vector is zero (no word the model gives a meaning) ranks by words alone.
 */
export async function planDocumentTurn({conversationId, text, attached, hasRetrieved, contextSize, prepare, countTokens, attachments, embedder}: PlanDocumentTurnInput): Promise<DocumentTurnPlan> {
    const plain = prepare(text);
    let room = contextSize - plain.maxTokens - plain.tokens.length;
    const blocks: string[] = [];
    const planned: NewAttachment[] = [];
    for (const document of attached) {
        const block = wholeDocumentBlock(document.name, document.pages);
        const tokens = countTokens(block);
        if (tokens <= room) {
            blocks.push(block);
            room -= tokens;
            planned.push({document, tokens, mode: "whole"});
        } else {
            // Chunks of about 300 tokens, smaller in a small context: a third of the room, so that several fit beside the history.
            const charsPerToken = block.length / Math.max(1, tokens);
            const targetChars = Math.max(minChunkChars, Math.floor(Math.min(chunkTargetTokens, room / 3) * charsPerToken));
            planned.push({document, tokens, mode: "retrieved", chunks: chunkDocument(document.pages, targetChars)});
        }
    }

    const retrievedNow = planned.filter((attachment) => attachment.mode === "retrieved");
    const pending: PendingDocument[] = retrievedNow.map((attachment) => ({name: attachment.document.name, chunks: attachment.chunks ?? []}));
    const passages: RetrievedPassage[] = [];
    let embeddingScrub: EmbeddingScrub | null = null;
    let backfilledVectors = 0;
    if (hasRetrieved || pending.length > 0) {
        let queryEmbedding: QueryEmbedding | undefined;
        const chosen = await embedder?.() ?? null;
        if (chosen != null) {
            const unembedded = hasRetrieved ? attachments.chunksWithoutVector(conversationId, chosen.modelId) : [];
            const {vectors, scrub} = await chosen.embed([text, ...pending.flatMap((document) => document.chunks.map((chunk) => chunk.text)),
                ...unembedded.map((chunk) => chunk.text)]);
            embeddingScrub = scrub;
            let next = 1;
            pending.forEach((document, index) => {
                document.vectors = vectors.slice(next, next += document.chunks.length);
                retrievedNow[index]!.embeddings = {model: chosen.modelId, vectors: document.vectors};
            });
            if (unembedded.length > 0) {
                attachments.addVectors(conversationId, chosen.modelId, unembedded.map((chunk, index) => ({chunkId: chunk.chunkId, vector: vectors[next + index]!})));
                backfilledVectors = unembedded.length;
            }
            if (vectors[0]!.some((value) => value !== 0))
                queryEmbedding = {model: chosen.modelId, vector: vectors[0]!};
        }
        const candidates = attachments.retrieve(conversationId, text, pending, queryEmbedding);
        for (const candidate of candidates) {
            if (passages.length >= maxPassagesPerTurn)
                break;
            if (countTokens(passagesBlock([...passages, candidate])) <= room)
                passages.push(candidate);
        }
        if (passages.length === 0 && candidates.length > 0) {
            const smallest = Math.min(...candidates.map((candidate) => countTokens(passagesBlock([candidate]))));
            throw new ContextOverflowError(contextSize - plain.maxTokens - room + smallest, plain.maxTokens, contextSize);
        }
        if (passages.length > 0)
            blocks.push(passagesBlock(passages));
    }
    const userText = userTurnWithDocuments(text, blocks);
    return {userText, prepared: blocks.length === 0 ? plain : prepare(userText), attachments: planned, passages, embeddingScrub, backfilledVectors};
}

/** What a turn reports of each document it brought: whole pages, or the passages retrieved from it. */
export function turnAttachmentReport(plan: DocumentTurnPlan): TurnAttachment[] {
    // Passages of this turn's documents name them by their place among those retrieved (two may share a name).
    const retrieved = plan.attachments.filter((attachment) => attachment.mode === "retrieved");
    return plan.attachments.map((attachment) => {
        const {document, tokens, mode} = attachment;
        const pendingIndex = retrieved.indexOf(attachment);
        return {
            name: document.name,
            bytes: document.bytes,
            pages: document.pages.length,
            tokens,
            mode,
            passages: mode === "whole"
                ? document.pages.map((page) => ({page: page.page, chars: page.text.length}))
                : plan.passages.filter((passage) => passage.pendingIndex === pendingIndex).map((passage) => ({page: passage.page, chars: passage.text.length}))
        };
    });
}

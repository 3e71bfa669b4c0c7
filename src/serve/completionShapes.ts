import type {ApiAnswer} from "../core/node/Core.js";

/** How one kind of completion is written in OpenAI's API: the whole answer's choice and the stream's chunks. */
export type CompletionShape = {
    idPrefix: string,
    object: string,
    chunkObject: string,
    whole: (text: string, finishReason: string) => Record<string, unknown>,
    /** The first chunk of a stream, before any text (the chat's role); null for none. */
    opening: Record<string, unknown> | null,
    text: (text: string) => Record<string, unknown>,
    closing: (finishReason: string) => Record<string, unknown>
};

export const chatCompletionShape: CompletionShape = {
    idPrefix: "chatcmpl",
    object: "chat.completion",
    chunkObject: "chat.completion.chunk",
    whole: (text, finishReason) => ({index: 0, message: {role: "assistant", content: text}, finish_reason: finishReason, logprobs: null}),
    opening: {index: 0, delta: {role: "assistant", content: ""}, finish_reason: null, logprobs: null},
    text: (text) => ({index: 0, delta: {content: text}, finish_reason: null, logprobs: null}),
    closing: (finishReason) => ({index: 0, delta: {}, finish_reason: finishReason, logprobs: null})
};

export const textCompletionShape: CompletionShape = {
    idPrefix: "cmpl",
    object: "text_completion",
    chunkObject: "text_completion",
    whole: (text, finishReason) => ({index: 0, text, finish_reason: finishReason, logprobs: null}),
    opening: null,
    text: (text) => ({index: 0, text, finish_reason: null, logprobs: null}),
    closing: (finishReason) => ({index: 0, text: "", finish_reason: finishReason, logprobs: null})
};

export function finishReasonOf(result: Pick<ApiAnswer, "finishReason">) {
    return result.finishReason === "length" ? "length" : "stop";
}

/** `cached_tokens` is 0 unless an earlier request of the same key and `cache_salt` left the prompt's prefix in their cache: no prompt is ever served from another's cache. */
export function usageOf(result: Pick<ApiAnswer, "promptTokens" | "completionTokens" | "cachedTokens">) {
    return {
        prompt_tokens: result.promptTokens,
        completion_tokens: result.completionTokens,
        total_tokens: result.promptTokens + result.completionTokens,
        prompt_tokens_details: {cached_tokens: result.cachedTokens}
    };
}

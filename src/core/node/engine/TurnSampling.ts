import type {LlamaGrammar} from "node-llama-cpp";

/**
 * How a turn's reply is sampled and where it stops: one type from `Core.sendMessage` down to
 * `ConversationContext.generate`. Each layer lets its callers set the part it passes on, and adds
 * only what it owns (the conversation, the prompt, the callbacks). What a turn leaves out comes from
 * its conversation's settings (`ConversationSettings.sampling`).
 */
export type TurnSampling = {
    /** Reply budget in tokens. Defaults to the conversation's `sampling.maxTokens`. */
    maxTokens?: number,
    /** Defaults to the conversation's `sampling.temperature`. */
    temperature?: number,
    /** Defaults to the conversation's `sampling.topK`. */
    topK?: number,
    /** Defaults to the conversation's `sampling.topP`. */
    topP?: number,
    /** `null`: a random seed. Defaults to the conversation's `sampling.seed`. */
    seed?: number | null,
    /** Texts that end the reply besides the chat template's own terminators (an API request's `stop`). Defaults to none. */
    stopTexts?: string[],
    /** Constrains the reply (see `LocalEngine.createJsonGrammar`). Defaults to none. */
    grammar?: LlamaGrammar
};

/** What the app and the CLI let a user set for one turn (`chat.send`, `--max-tokens`, `--temperature`, `--seed`). */
export type UserTurnSampling = Pick<TurnSampling, "maxTokens" | "temperature" | "seed">;

/** The sampling a context generates with: its reply budget and temperature settled. */
export type ResolvedSampling = TurnSampling & Required<Pick<TurnSampling, "maxTokens" | "temperature">>;

import type {LlamaContext, LlamaContextSequence, LlamaModel, Token} from "node-llama-cpp";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {SeededRandom} from "./SeededRandom.js";

export type SimGeneration = {
    text: string,
    /** Tokens generated. */
    tokens: number,
    finishReason: "stop" | "length"
};

/** What the simulator generates with: the real test model, or a synthetic stand-in. */
export interface SimTextModel {
    readonly kind: "llama" | "synthetic";
    /** Token ids of the text, as the server's `/tokenize` returns them. */
    tokenize(text: string): number[];
    /** `tokenize(text).length`. */
    countTokens(text: string): number;
    /** Continues `prompt` greedily for at most `maxTokens` tokens. */
    generate(prompt: string, maxTokens: number): Promise<SimGeneration>;
    dispose(): Promise<void>;
}

/** Context of the model used for generation (the simulated server's context is the page pool). */
const llamaContextSize = 512;
/** Most tokens generated per request; the rest of the context holds the prompt's tail. */
export const simMaxGeneratedTokens = 256;

/** Greedy generation with a real GGUF model through node-llama-cpp, one thread, one sequence. */
export class LlamaSimTextModel implements SimTextModel {
    public readonly kind = "llama";
    private readonly _model: LlamaModel;
    private readonly _context: LlamaContext;
    private readonly _sequence: LlamaContextSequence;

    private constructor(model: LlamaModel, context: LlamaContext) {
        this._model = model;
        this._context = context;
        this._sequence = context.getSequence();
    }

    public static async load(modelPath: string) {
        const llama = await loadLlama();
        const model = await llama.loadModel({modelPath});
        try {
            // Always one thread here: on a 2-core machine the default is hundreds of times slower.
            const context = await model.createContext({contextSize: llamaContextSize, threads: 1});
            return new LlamaSimTextModel(model, context);
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    public tokenize(text: string): number[] {
        return [...this._model.tokenize(text)];
    }

    public countTokens(text: string) {
        return this._model.tokenize(text).length;
    }

    /** Callers serialise requests: there is one sequence, cleared before each. */
    public async generate(prompt: string, maxTokens: number): Promise<SimGeneration> {
        const limit = Math.max(1, Math.min(maxTokens, simMaxGeneratedTokens));
        await this._sequence.clearHistory();
        let promptTokens = this._model.tokenize(prompt, false);
        if (this._model.tokens.bos != null)
            promptTokens = [this._model.tokens.bos, ...promptTokens];
        const room = llamaContextSize - limit - 1;
        if (promptTokens.length > room)
            promptTokens = promptTokens.slice(promptTokens.length - room);
        if (promptTokens.length === 0)
            return {text: "", tokens: 0, finishReason: "stop"};

        const generated: Token[] = [];
        let finishReason: SimGeneration["finishReason"] = "length";
        for await (const token of this._sequence.evaluate(promptTokens, {temperature: 0})) {
            if (this._model.isEogToken(token)) {
                finishReason = "stop";
                break;
            }
            generated.push(token);
            if (generated.length >= limit)
                break;
        }
        return {text: this._model.detokenize(generated, false, promptTokens), tokens: generated.length, finishReason};
    }

    public async dispose() {
        await this._context.dispose();
        await this._model.dispose();
    }
}

/** How the synthetic stand-in counts: one token per this many characters. */
export const syntheticCharsPerToken = 3.5;

const syntheticWords = (
    "the a little girl boy dog cat sun tree park ball happy sad big small red blue went saw played ran " +
    "jumped found liked wanted friend mom dad day garden flower bird fish toy box car house sky rain"
).split(" ");

/**
 * A model-free stand-in for fast runs and demos: story-like words chosen by a seeded PRNG
 * from the prompt's length, and about one token per 3.5 characters.
 */
export class SyntheticSimTextModel implements SimTextModel {
    public readonly kind = "synthetic";
    private readonly _seed: number;

    public constructor(seed: number) {
        this._seed = seed;
    }

    /** One id per piece of `syntheticCharsPerToken` characters: the code point that starts it. */
    public tokenize(text: string): number[] {
        return Array.from({length: this.countTokens(text)}, (_, index) => text.codePointAt(Math.floor(index * syntheticCharsPerToken)) ?? 0);
    }

    public countTokens(text: string) {
        return Math.ceil(text.length / syntheticCharsPerToken);
    }

    public async generate(prompt: string, maxTokens: number): Promise<SimGeneration> {
        const random = new SeededRandom(this._seed ^ prompt.length ^ (prompt.charCodeAt(0) << 8));
        const limit = Math.max(1, Math.min(maxTokens, simMaxGeneratedTokens));
        const wanted = random.between(Math.min(8, limit), limit);
        let text = "";
        while (this.countTokens(text) < wanted) {
            const word = random.pick(syntheticWords);
            text += (text.length === 0 ? word[0]!.toUpperCase() + word.slice(1) : ` ${word}`) + (random.chance(0.1) ? "." : "");
        }
        return {text, tokens: this.countTokens(text), finishReason: wanted >= limit ? "length" : "stop"};
    }

    public async dispose() {}
}

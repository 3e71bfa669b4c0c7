import type {LlamaModel, Token} from "node-llama-cpp";

export type PlainRun = {tokens: number, tokensPerSecond: number, promptTokens: number, prefillTokensPerSecond: number};

/**
 * Plain node-llama-cpp: a fresh context, the given prompt, greedy; no Cleanroom in the way.
 * Prefill is the prompt's tokens over the time to the first token; generation counts from the
 * first token on, and stops at `maxTokens` or after `maxMs`.
 */
export async function plainRun(model: LlamaModel, promptTokens: Token[], threads: number, maxTokens: number, maxMs = Number.POSITIVE_INFINITY): Promise<PlainRun> {
    const context = await model.createContext({contextSize: 2048, threads, sequences: 1});
    try {
        const sequence = context.getSequence();
        let generated = 0;
        let firstAt = 0;
        let lastAt = 0;
        const started = performance.now();
        for await (const token of sequence.evaluate(promptTokens, {temperature: 0})) {
            if (model.isEogToken(token))
                break;
            lastAt = performance.now();
            if (generated === 0)
                firstAt = lastAt;
            if (++generated >= maxTokens || lastAt - firstAt > maxMs)
                break;
        }
        return {
            tokens: generated,
            tokensPerSecond: generated > 1 ? (generated - 1) / ((lastAt - firstAt) / 1000) : 0,
            promptTokens: promptTokens.length,
            prefillTokensPerSecond: promptTokens.length / ((firstAt - started) / 1000)
        };
    } finally {
        await context.dispose();
    }
}

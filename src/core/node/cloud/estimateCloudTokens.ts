/**
 * Characters per token assumed for an endpoint that offers no tokenizer. Measured on this
 * project's English documents (README.md and SECURITY.md, frozen in test/fixtures/englishProse) and TypeScript sources with the 15
 * chat-model tokenizers llama.cpp ships (Llama 3, Llama 2 / Mistral, Qwen2, Gemma, Command R,
 * DeepSeek, Phi-3, MPT, Falcon, StarCoder, …; `npx vitest run test/integration/cloud-token-count.test.ts`
 * prints the table): 3.1 to 3.9 for English, 3.4 to 4.3 for code, the one exception Baichuan's
 * on code (2.5). At 3, the estimate counts 4% to 42% more tokens than each of them (Baichuan on
 * code: 16% fewer), so a request that would not fit is refused before it is sent, and never
 * twice the true count, which the truncation check would take for a server that dropped half
 * of the prompt.
 */
export const estimatedCharsPerToken = 3;

/**
 * Our estimate of a text's tokens at an endpoint without a tokenizer: ASCII characters at
 * `estimatedCharsPerToken`, and every other character as a token of its own (CJK text takes
 * about one token per character; accented letters are counted high, never low).
 */
export function estimateCloudTokens(text: string): number {
    let ascii = 0;
    let other = 0;
    for (const character of text) {
        if (character.charCodeAt(0) < 0x80)
            ascii++;
        else
            other++;
    }
    return Math.ceil(ascii / estimatedCharsPerToken) + other;
}

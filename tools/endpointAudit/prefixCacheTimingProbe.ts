import {fillerText, seededRandom} from "./fillerText.js";
import {defaultProbeSecret, pinPrompt} from "./prefixCacheProbe.js";

export type PrefixCacheTimingProbeOptions = {
    baseURL: string,
    model: string,
    /** The victim's key; defaults to none. */
    victimApiKey?: string | null,
    /** The attacker's key; defaults to the victim's. */
    attackerApiKey?: string | null,
    /** Rounds per kind of attacker request (same prefix, different prefix). Defaults to `16`. */
    pairs?: number,
    /** Characters of private text in the victim's prompt, before its PIN sentence. Defaults to `1000`. */
    prefixChars?: number,
    timeoutMs?: number,
    fetch?: typeof fetch
};

export type PrefixCacheTimingReport = {
    /** Rounds per kind of attacker request. */
    pairs: number,
    /** Time to first token of the attacker's requests that share the victim's prefix, in ms. */
    samePrefixMs: TimingSummary,
    /** Time to first token of the attacker's requests that share nothing with it (same length), in ms. */
    differentPrefixMs: TimingSummary,
    /**
     * One-sided Mann-Whitney U test that the same-prefix requests are faster (normal approximation):
     * the chance of a difference at least this large if the server treated both kinds alike.
     */
    pValue: number | null,
    /** The same-prefix requests were clearly faster (p below `leakPValue` and the medians at least `leakShare` apart): the victim's prefix was served from a cache. */
    leak: boolean,
    error: string | null
};

export type TimingSummary = {median: number, p25: number, p75: number, samples: number[]};

/** How unlikely the difference must be under "no cache shared" to be reported as a leak. */
export const leakPValue = 0.001;
/** How much faster (a share of the different-prefix median) the same-prefix median must be: noise on a loaded machine is not a cache. */
export const leakShare = 0.2;

/**
 * The prefix-cache side channel measured by time alone, as PromptPeek and InputSnatch do where a
 * server reports no cached tokens: a victim sends a long private prompt; right after, an attacker
 * sends either the same opening with another ending, or an opening of its own of the same length.
 * A server that serves the victim's prefix from its cache answers the first kind faster. Each round
 * is a victim request followed by an attacker request, the two kinds alternating, every attacker
 * prompt different from the attacker's earlier ones (so none is served from the attacker's own cache).
 * The time to first token is the whole request's time, as it asks for a single token.
 */
export async function probePrefixCacheTiming(options: PrefixCacheTimingProbeOptions): Promise<PrefixCacheTimingReport> {
    const pairs = options.pairs ?? 16;
    const doFetch = options.fetch ?? fetch;
    const privateText = fillerText(seededRandom(4417), options.prefixChars ?? 1000);
    const victimPrompt = `${privateText} ${pinPrompt(defaultProbeSecret)}`;
    const same: number[] = [];
    const different: number[] = [];
    let error: string | null = null;
    const ask = async (prompt: string, apiKey: string | null | undefined) => {
        const started = performance.now();
        const response = await doFetch(`${options.baseURL.replace(/\/$/, "")}/chat/completions`, {
            method: "POST",
            headers: {"content-type": "application/json", ...apiKey != null ? {authorization: `Bearer ${apiKey}`} : {}},
            body: JSON.stringify({model: options.model, messages: [{role: "user", content: prompt}], max_tokens: 1, temperature: 0}),
            signal: AbortSignal.timeout(options.timeoutMs ?? 60_000)
        });
        const text = await response.text();
        if (!response.ok)
            throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`);
        return performance.now() - started;
    };
    const attackerKey = options.attackerApiKey === undefined ? options.victimApiKey : options.attackerApiKey;
    try {
        for (let round = 0; round < 2 * pairs; round++) {
            await ask(victimPrompt, options.victimApiKey);
            // The round's number keeps every attacker prompt its own: at the end (same prefix), or at the start (different prefix).
            const samePrefix = round % 2 === 0;
            const attackerPrompt = samePrefix
                ? `${privateText} ${pinPrompt(String(1000 + round))}`
                : `Round ${1000 + round}. ${privateText.slice(12)} ${pinPrompt(defaultProbeSecret)}`;
            (samePrefix ? same : different).push(await ask(attackerPrompt, attackerKey));
        }
    } catch (caught) {
        error = caught instanceof Error ? caught.message : String(caught);
    }
    const pValue = same.length > 1 && different.length > 1 ? mannWhitneyLessP(same, different) : null;
    const samePrefixMs = summarize(same);
    const differentPrefixMs = summarize(different);
    return {
        pairs, samePrefixMs, differentPrefixMs, pValue,
        leak: pValue != null && pValue < leakPValue && samePrefixMs.median <= (1 - leakShare) * differentPrefixMs.median,
        error
    };
}

function summarize(samples: number[]): TimingSummary {
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (share: number) => sorted.length === 0 ? NaN : round(sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!);
    return {median: at(0.5), p25: at(0.25), p75: at(0.75), samples: samples.map(round)};
}

/**
 * One-sided p-value that `a` tends to be smaller than `b` (Mann-Whitney U, normal approximation
 * with continuity correction, ties ranked by their mean rank).
 */
export function mannWhitneyLessP(a: number[], b: number[]): number {
    const all = [...a.map((value) => ({value, fromA: true})), ...b.map((value) => ({value, fromA: false}))].sort((x, y) => x.value - y.value);
    let rankSumA = 0;
    for (let start = 0; start < all.length;) {
        let end = start;
        while (end + 1 < all.length && all[end + 1]!.value === all[start]!.value)
            end++;
        const meanRank = (start + end) / 2 + 1;
        for (let index = start; index <= end; index++)
            if (all[index]!.fromA)
                rankSumA += meanRank;
        start = end + 1;
    }
    const u = rankSumA - a.length * (a.length + 1) / 2;
    const mean = a.length * b.length / 2;
    const sd = Math.sqrt(a.length * b.length * (a.length + b.length + 1) / 12);
    const z = (u - mean + 0.5) / sd;
    return normalCdf(z);
}

/** Φ(z), from the error function (Abramowitz and Stegun 7.1.26, error below 1.5e-7). */
function normalCdf(z: number) {
    const x = Math.abs(z) / Math.SQRT2;
    const t = 1 / (1 + 0.3275911 * x);
    const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
    return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

function round(value: number) {
    return Math.round(value * 100) / 100;
}

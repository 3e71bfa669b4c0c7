/**
 * Fingerprints of conversations: hashes of every run of 8 consecutive words. Text matching
 * them in a cloud reply, when the run is absent from the request itself, is contamination
 * without a canary. Words are maximal runs of letters and digits, lower-cased, so matching
 * is case-insensitive and tolerant of punctuation and spacing between words.
 * Hashes are 53-bit integers (two 32-bit FNV-style lanes), safe as JS numbers and in SQLite.
 */
export type FingerprintOptions = {
    /** Words per fingerprint. Defaults to `8`. */
    windowWords?: number,
    /**
     * Mixed into every hash, so that stored fingerprints of one install are useless for
     * guessing text with another's. Index and scanner must use the same salt. Defaults to `""`.
     */
    salt?: string
};

export const defaultFingerprintWords = 8;
const defaultSalt = "";

type ResolvedFingerprintOptions = Required<FingerprintOptions>;

const laneAPrime = 0x01000193;
const laneBPrime = 0x5bd1e995;
const twoPow21 = 2 ** 21;

/** ASCII: 0 = not part of a word, else the lower-cased code. */
const asciiWordTable = (() => {
    const table = new Uint8Array(128);
    for (let code = 0; code < 128; code++) {
        if (code >= 0x30 && code <= 0x39 || code >= 0x61 && code <= 0x7a)
            table[code] = code;
        else if (code >= 0x41 && code <= 0x5a)
            table[code] = code + 0x20;
    }
    return table;
})();

const unicodeWordChar = /[\p{L}\p{N}\p{M}]/u;

/** Called for each complete window: its hash and the text offsets of its first and last word. */
export type GramListener = (hash: number, startOffset: number, endOffset: number) => void;

/**
 * Splits streamed text into words and hashes every window of consecutive words, across
 * chunk boundaries. Offsets are absolute positions in the whole text pushed so far.
 */
export class WordGramHasher {
    public readonly windowWords: number;
    private readonly _seedA: number;
    private readonly _seedB: number;
    private readonly _wordA: Int32Array;
    private readonly _wordB: Int32Array;
    private readonly _wordStart: Float64Array;
    private _completeWords = 0;
    private _inWord = false;
    private _currentA = 0;
    private _currentB = 0;
    private _currentStart = 0;
    private _offset = 0;

    public constructor(options: FingerprintOptions = {}) {
        const resolved = resolveFingerprintOptions(options);
        this.windowWords = resolved.windowWords;
        const seeds = seedsFromSalt(resolved.salt);
        this._seedA = seeds[0];
        this._seedB = seeds[1];
        this._wordA = new Int32Array(this.windowWords);
        this._wordB = new Int32Array(this.windowWords);
        this._wordStart = new Float64Array(this.windowWords);
    }

    /** Text pushed so far, in UTF-16 code units. */
    public get offset() {
        return this._offset;
    }

    /**
     * Where text must still be held back so that a later match can cover it: the start of
     * the oldest of the last `windowWords - 1` complete words, else of the word in progress.
     * `null` when no word has started.
     */
    public get holdFrom(): number | null {
        const keep = this.windowWords - 1;
        if (this._completeWords > 0 && keep > 0) {
            const oldest = Math.max(0, this._completeWords - keep);
            return this._wordStart[oldest % this.windowWords]!;
        }
        return this._inWord ? this._currentStart : null;
    }

    public push(text: string, onGram: GramListener) {
        const base = this._offset;
        for (let i = 0; i < text.length; i++) {
            const code = text.charCodeAt(i);
            let lower: number;
            if (code < 128)
                lower = asciiWordTable[code]!;
            else if (code >= 0xd800 && code <= 0xdfff)
                lower = code; // surrogate halves: part of a word, so a split pair hashes the same
            else {
                const char = text[i]!;
                lower = unicodeWordChar.test(char) ? foldCase(char) : 0;
            }

            if (lower !== 0) {
                if (!this._inWord) {
                    this._inWord = true;
                    this._currentA = this._seedA;
                    this._currentB = this._seedB;
                    this._currentStart = base + i;
                }
                this._currentA = Math.imul(this._currentA ^ lower, laneAPrime);
                this._currentB = Math.imul(this._currentB ^ lower, laneBPrime) ^ (this._currentB >>> 15);
            } else if (this._inWord)
                this._completeWord(base + i, onGram);
        }
        this._offset = base + text.length;
    }

    /** Ends the text: the word in progress, if any, is complete. */
    public end(onGram: GramListener) {
        if (this._inWord)
            this._completeWord(this._offset, onGram);
    }

    private _completeWord(endOffset: number, onGram: GramListener) {
        this._inWord = false;
        const slot = this._completeWords % this.windowWords;
        this._wordA[slot] = this._currentA;
        this._wordB[slot] = this._currentB;
        this._wordStart[slot] = this._currentStart;
        this._completeWords++;
        if (this._completeWords < this.windowWords)
            return;

        let a = this._seedA ^ this.windowWords;
        let b = this._seedB;
        const first = this._completeWords - this.windowWords;
        for (let word = first; word < this._completeWords; word++) {
            const index = word % this.windowWords;
            a = Math.imul(a ^ this._wordA[index]!, laneAPrime);
            a ^= a >>> 13;
            b = Math.imul((b << 5 | b >>> 27) ^ this._wordB[index]!, laneBPrime);
            b ^= b >>> 16;
        }
        const hash = (a >>> 0) * twoPow21 + (b >>> 11);
        onGram(hash, this._wordStart[first % this.windowWords]!, endOffset);
    }
}

/** Every fingerprint of the text. */
export function fingerprintText(text: string, options: FingerprintOptions = {}): Set<number> {
    const hashes = new Set<number>();
    addFingerprints(hashes, text, options);
    return hashes;
}

function addFingerprints(into: Set<number>, text: string, options: FingerprintOptions) {
    const hasher = new WordGramHasher(options);
    const add = (hash: number) => void into.add(hash);
    hasher.push(text, add);
    hasher.end(add);
}

export type FingerprintMatchOptions = {
    /**
     * Fingerprints found in more than this many conversations are treated as common phrases
     * (boilerplate the model says everywhere) and never match. Defaults to `Infinity` (off).
     */
    maxConversations?: number
};

/**
 * Fingerprints of the user's conversations, with in how many conversations each occurs.
 * Build it from the other conversations' messages; ask `excluding()` for the matcher of one
 * request.
 */
export class FingerprintIndex {
    public readonly options: Readonly<ResolvedFingerprintOptions>;
    private readonly _conversationCounts = new Map<number, number>();

    public constructor(options: FingerprintOptions = {}) {
        this.options = resolveFingerprintOptions(options);
    }

    public get size() {
        return this._conversationCounts.size;
    }

    /** Adds one conversation's texts. Call once per conversation: counts are per call. */
    public addConversation(texts: Iterable<string>) {
        const hashes = new Set<number>();
        for (const text of texts)
            addFingerprints(hashes, text, this.options);
        this.addConversationHashes(hashes);
    }

    /** Adds one conversation's stored fingerprints (as from `fingerprintText`). */
    public addConversationHashes(hashes: Iterable<number>) {
        for (const hash of new Set(hashes))
            this._conversationCounts.set(hash, (this._conversationCounts.get(hash) ?? 0) + 1);
    }

    public has(hash: number) {
        return this._conversationCounts.has(hash);
    }

    /** The matcher for one request: these fingerprints minus those present in the request's own texts. */
    public excluding(requestTexts: Iterable<string>, options: FingerprintMatchOptions = {}): FingerprintMatcher {
        const present = new Set<number>();
        for (const text of requestTexts)
            addFingerprints(present, text, this.options);
        return FingerprintMatcher._create(this._conversationCounts, present, options.maxConversations ?? Infinity, this.options);
    }
}

/** Decides whether a window of reply words matches another conversation. */
export class FingerprintMatcher {
    public readonly options: Readonly<ResolvedFingerprintOptions>;
    private readonly _counts: ReadonlyMap<number, number>;
    private readonly _excluded: ReadonlySet<number>;
    private readonly _maxConversations: number;

    private constructor(counts: ReadonlyMap<number, number>, excluded: ReadonlySet<number>, maxConversations: number,
        options: ResolvedFingerprintOptions) {
        this._counts = counts;
        this._excluded = excluded;
        this._maxConversations = maxConversations;
        this.options = options;
    }

    /** @internal only FingerprintIndex calls this */
    public static _create(counts: ReadonlyMap<number, number>, excluded: ReadonlySet<number>, maxConversations: number,
        options: ResolvedFingerprintOptions) {
        return new FingerprintMatcher(counts, excluded, maxConversations, options);
    }

    /** Whether there is anything to match at all. */
    public get isEmpty() {
        return this._counts.size === 0;
    }

    public matches(hash: number) {
        const count = this._counts.get(hash);
        return count != null && count <= this._maxConversations && !this._excluded.has(hash);
    }
}

function resolveFingerprintOptions(options: FingerprintOptions): ResolvedFingerprintOptions {
    const windowWords = options.windowWords ?? defaultFingerprintWords;
    if (!Number.isInteger(windowWords) || windowWords < 1)
        throw new RangeError(`windowWords must be a positive whole number, got ${windowWords}`);
    return {windowWords, salt: options.salt ?? defaultSalt};
}

function seedsFromSalt(salt: string): [number, number] {
    let a = 0x811c9dc5 | 0;
    let b = 0x2545f491;
    for (let i = 0; i < salt.length; i++) {
        a = Math.imul(a ^ salt.charCodeAt(i), laneAPrime);
        b = Math.imul(b ^ salt.charCodeAt(i), laneBPrime) ^ (b >>> 15);
    }
    return [a, b];
}

function foldCase(char: string) {
    const lower = char.toLowerCase();
    let code = 0;
    for (let i = 0; i < lower.length; i++)
        code = code * 31 + lower.charCodeAt(i);
    return code === 0 ? 1 : code;
}

import {capitalReadAsLatin, foldLetter} from "./foldLetter.js";
import {HmacSha256} from "./HmacSha256.js";
import {stockPhrases as shippedStockPhrases} from "./stockPhrases.js";

/**
 * Fingerprints of conversations: keyed hashes of every run of 8 consecutive words. Text matching
 * them in a cloud reply, when the run is absent from the request itself, is contamination
 * without a canary. Words are maximal runs of letters, digits and marks, lower-cased and folded
 * (`foldLetter`: a Cyrillic `е` or a mathematical `𝐞` is the `e` it imitates), so matching is
 * case-insensitive, blind to look-alike letters and tolerant of punctuation and spacing between words.
 *
 * A run's fingerprint is HMAC-SHA-256, under the install's secret key, of its words joined by
 * single spaces (UTF-8), its first 53 bits (safe as a JS number and in SQLite). Without the key a
 * fingerprint cannot be checked against a dictionary of common runs, and one install's
 * fingerprints say nothing about another's.
 */
export type FingerprintOptions = {
    /** Words per fingerprint. Defaults to `8`. */
    windowWords?: number,
    /** The install's secret key (at least 16 bytes). No default: the index and every scanner of it must share one. */
    key: Uint8Array
};

/** How runs are hashed: built once from `FingerprintOptions` and shared by an index and its scanners. */
export type FingerprintHashing = {
    readonly windowWords: number,
    readonly mac: HmacSha256
};

export const defaultFingerprintWords = 8;
/**
 * A run found in more of the user's other conversations than this is a phrase of theirs or of the
 * model's (a greeting, a sign-off, boilerplate), not one conversation's content: it never matches.
 * Contamination is still caught by the runs that are the conversation's own.
 */
export const defaultMaxConversations = 4;

const textEncoder = new TextEncoder();

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

/**
 * Called for each complete window: its hash, the text offsets of its first and last word, and the
 * hash of its Latin-capital reading (`capitalsAsLatin`) when that reading differs, else `null`.
 */
export type GramListener = (hash: number, startOffset: number, endOffset: number, capitalsAsLatinHash: number | null) => void;

/** The hashing of `options`, checked: a whole number of words, a key long enough. */
export function fingerprintHashing(options: FingerprintOptions | FingerprintHashing): FingerprintHashing {
    if ("mac" in options)
        return options;
    const windowWords = options.windowWords ?? defaultFingerprintWords;
    if (!Number.isInteger(windowWords) || windowWords < 1)
        throw new RangeError(`windowWords must be a positive whole number, got ${windowWords}`);
    return {windowWords, mac: new HmacSha256(options.key)};
}

/**
 * Splits streamed text into words and hashes every window of consecutive words, across
 * chunk boundaries. Offsets are absolute positions in the whole text pushed so far.
 *
 * A few capitals imitate one Latin letter and their small letters another (Greek `Ν` is N and `ν`
 * is v; `Η` is H, `η` is n; `Υ` is Y, `υ` is u). Words are read lower case first, so that Greek
 * matches Greek whatever its case; a window holding such a capital is also hashed with every one
 * read as the Latin capital it looks like, so that English in capitals written with them
 * (`UΝDER ΤΗE`) matches the English it imitates.
 */
export class WordGramHasher {
    public readonly windowWords: number;
    private readonly _mac: HmacSha256;
    private readonly _words: string[];
    /** Each word's Latin-capital reading, when it holds a capital read otherwise (`null` for the others). */
    private readonly _wordsAsLatin: Array<string | null>;
    private readonly _wordStart: Float64Array;
    private _completeWords = 0;
    private _inWord = false;
    private _current = "";
    private _currentAsLatin: string | null = null;
    private _currentStart = 0;
    private _offset = 0;
    /** A high surrogate that ended the last push: read with the next push's first character. */
    private _carry = "";
    /** The window's UTF-8, reused from one window to the next. */
    private _encoded = new Uint8Array(256);

    public constructor(options: FingerprintOptions | FingerprintHashing) {
        const hashing = fingerprintHashing(options);
        this.windowWords = hashing.windowWords;
        this._mac = hashing.mac;
        this._words = new Array<string>(this.windowWords).fill("");
        this._wordsAsLatin = new Array<string | null>(this.windowWords).fill(null);
        this._wordStart = new Float64Array(this.windowWords);
    }

    /** Text pushed so far, in UTF-16 code units. */
    public get offset() {
        return this._offset;
    }

    /**
     * Where text must still be held back so that a later match can cover it: the start of
     * the oldest of the last `windowWords - 1` complete words, else of the word in progress
     * (or of half a character still to be read). `null` when no word has started.
     */
    public get holdFrom(): number | null {
        const keep = this.windowWords - 1;
        if (this._completeWords > 0 && keep > 0) {
            const oldest = Math.max(0, this._completeWords - keep);
            return this._wordStart[oldest % this.windowWords]!;
        }
        if (this._inWord)
            return this._currentStart;
        return this._carry !== "" ? this._offset - this._carry.length : null;
    }

    public push(text: string, onGram: GramListener) {
        const base = this._offset - this._carry.length;
        const joined = this._carry + text;
        this._offset += text.length;
        this._carry = "";
        let end = joined.length;
        const lastCode = joined.charCodeAt(end - 1);
        if (lastCode >= 0xd800 && lastCode <= 0xdbff) {
            this._carry = joined.slice(end - 1);
            end--;
        }
        this._read(joined, end, base, onGram);
    }

    /** Reads `text` up to `end`, a code point at a time; `base` is the offset of `text`. */
    private _read(text: string, end: number, base: number, onGram: GramListener) {
        for (let i = 0; i < end;) {
            const code = text.charCodeAt(i);
            let width = 1;
            let folded: string | null;
            let asLatin: string | null = null;
            if (code < 128) {
                const lower = asciiWordTable[code]!;
                folded = lower !== 0 ? String.fromCharCode(lower) : null;
            } else {
                const point = text.codePointAt(i)!;
                width = point > 0xffff ? 2 : 1;
                const char = String.fromCodePoint(point);
                folded = unicodeWordChar.test(char) ? foldLetter(char) : null;
                asLatin = folded != null ? capitalReadAsLatin(char) : null;
            }

            if (folded != null) {
                this._startWord(base + i);
                if (asLatin != null || this._currentAsLatin != null)
                    this._currentAsLatin = (this._currentAsLatin ?? this._current) + (asLatin ?? folded);
                this._current += folded;
            } else if (this._inWord)
                this._completeWord(base + i, onGram);
            i += width;
        }
    }

    private _startWord(offset: number) {
        if (this._inWord)
            return;
        this._inWord = true;
        this._current = "";
        this._currentAsLatin = null;
        this._currentStart = offset;
    }

    /** Ends the text: the word in progress, if any, is complete. */
    public end(onGram: GramListener) {
        if (this._carry !== "") {
            const carry = this._carry;
            this._carry = "";
            this._read(carry, carry.length, this._offset - carry.length, onGram);
        }
        if (this._inWord)
            this._completeWord(this._offset, onGram);
    }

    private _completeWord(endOffset: number, onGram: GramListener) {
        this._inWord = false;
        const slot = this._completeWords % this.windowWords;
        this._words[slot] = this._current;
        this._wordsAsLatin[slot] = this._currentAsLatin;
        this._wordStart[slot] = this._currentStart;
        this._completeWords++;
        if (this._completeWords < this.windowWords)
            return;

        const first = this._completeWords - this.windowWords;
        let window = this._words[first % this.windowWords]!;
        let readAsLatin = this._wordsAsLatin[first % this.windowWords] != null;
        for (let word = first + 1; word < this._completeWords; word++) {
            window += " " + this._words[word % this.windowWords]!;
            readAsLatin ||= this._wordsAsLatin[word % this.windowWords] != null;
        }
        let windowAsLatin: string | null = null;
        if (readAsLatin) {
            windowAsLatin = "";
            for (let word = first; word < this._completeWords; word++) {
                const slot = word % this.windowWords;
                windowAsLatin += (word > first ? " " : "") + (this._wordsAsLatin[slot] ?? this._words[slot]!);
            }
        }
        onGram(this._hash(window), this._wordStart[first % this.windowWords]!, endOffset, windowAsLatin != null ? this._hash(windowAsLatin) : null);
    }

    private _hash(window: string) {
        if (this._encoded.length < window.length * 3)
            this._encoded = new Uint8Array(window.length * 3);
        const {written} = textEncoder.encodeInto(window, this._encoded);
        return this._mac.mac53(this._encoded, written);
    }
}

/** Every fingerprint of the text. */
export function fingerprintText(text: string, options: FingerprintOptions | FingerprintHashing): Set<number> {
    const hashes = new Set<number>();
    addFingerprints(hashes, text, fingerprintHashing(options));
    return hashes;
}

function addFingerprints(into: Set<number>, text: string, hashing: FingerprintHashing) {
    const hasher = new WordGramHasher(hashing);
    const add = (hash: number, _start: number, _end: number, capitalsAsLatinHash: number | null) => {
        into.add(hash);
        if (capitalsAsLatinHash != null)
            into.add(capitalsAsLatinHash);
    };
    hasher.push(text, add);
    hasher.end(add);
}

export type FingerprintIndexOptions = FingerprintOptions & {
    /**
     * Texts whose runs never match: stock phrases that honest replies and the user's own
     * conversations share ("thank you very much for your help today"). Defaults to the shipped
     * list (`stockPhrases.json`, a few hundred greetings, sign-offs and boilerplate).
     */
    stockPhrases?: Iterable<string>
};

export type FingerprintMatchOptions = {
    /**
     * Fingerprints found in more than this many conversations are treated as common phrases
     * (boilerplate the user or the model says everywhere) and never match. `Infinity` turns this
     * off. Defaults to `defaultMaxConversations` (4).
     */
    maxConversations?: number
};

/**
 * Fingerprints of the user's conversations, with in how many conversations each occurs.
 * Build it from the other conversations' messages; ask `excluding()` for the matcher of one
 * request.
 */
export class FingerprintIndex {
    public readonly options: FingerprintHashing;
    private readonly _conversationCounts = new Map<number, number>();
    private readonly _stock = new Set<number>();

    public constructor(options: FingerprintIndexOptions) {
        this.options = fingerprintHashing(options);
        for (const phrase of options.stockPhrases ?? shippedStockPhrases)
            addFingerprints(this._stock, phrase, this.options);
    }

    public get size() {
        return this._conversationCounts.size;
    }

    /** Fingerprints of the stock phrases: never matched. */
    public get stockRuns() {
        return this._stock.size;
    }

    /** Adds one conversation's texts. Call once per conversation: counts are per call. */
    public addConversation(texts: Iterable<string>) {
        const hashes = new Set<number>();
        for (const text of texts)
            addFingerprints(hashes, text, this.options);
        this._countConversation(hashes);
    }

    /** Adds one conversation's stored fingerprints (as from `fingerprintText` with this index's `options`). */
    public addConversationHashes(hashes: Iterable<number>) {
        // A Set (what fingerprintText gives) is counted as it is: copying it first took about half the time spent here.
        this._countConversation(hashes instanceof Set ? hashes : new Set(hashes));
    }

    private _countConversation(uniqueHashes: ReadonlySet<number>) {
        const counts = this._conversationCounts;
        for (const hash of uniqueHashes)
            counts.set(hash, (counts.get(hash) ?? 0) + 1);
    }

    public has(hash: number) {
        return this._conversationCounts.has(hash);
    }

    /** The matcher for one request: these fingerprints minus those present in the request's own texts and the common phrases. */
    public excluding(requestTexts: Iterable<string>, options: FingerprintMatchOptions = {}): FingerprintMatcher {
        const present = new Set<number>();
        for (const text of requestTexts)
            addFingerprints(present, text, this.options);
        return FingerprintMatcher._create({
            counts: this._conversationCounts, excluded: present, stock: this._stock,
            maxConversations: options.maxConversations ?? defaultMaxConversations
        }, this.options);
    }
}

type MatcherTables = {
    counts: ReadonlyMap<number, number>,
    /** Runs of the request itself. */
    excluded: ReadonlySet<number>,
    stock: ReadonlySet<number>,
    maxConversations: number
};

/**
 * Decides whether a window of reply words matches another conversation. A run that is a common
 * phrase (a stock phrase, or found in more than `maxConversations` conversations) never matches;
 * nor does a run that shares a word with one in the reply (the phrase with a few words more on
 * either side, two phrases back to back). `CanaryScanner` decides on a matching run once the 7
 * runs after it are known, and holds its words back until then.
 */
export class FingerprintMatcher {
    public readonly options: FingerprintHashing;
    private readonly _tables: MatcherTables;

    private constructor(tables: MatcherTables, options: FingerprintHashing) {
        this._tables = tables;
        this.options = options;
    }

    /** @internal only FingerprintIndex calls this */
    public static _create(tables: MatcherTables, options: FingerprintHashing) {
        return new FingerprintMatcher(tables, options);
    }

    /** Whether there is anything to match at all. */
    public get isEmpty() {
        return this._tables.counts.size === 0;
    }

    /** The run is in another conversation, not in this request, and not a common phrase. */
    public matches(hash: number) {
        const {counts, excluded, maxConversations} = this._tables;
        const count = counts.get(hash);
        return count != null && count <= maxConversations && !excluded.has(hash) && !this.isCommonPhrase(hash);
    }

    /** The run is a stock phrase, or in more than `maxConversations` conversations: runs that share a word with it do not match either. */
    public isCommonPhrase(hash: number) {
        const {counts, stock, maxConversations} = this._tables;
        return stock.has(hash) || (counts.get(hash) ?? 0) > maxConversations;
    }
}

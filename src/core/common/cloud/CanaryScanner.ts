import {canaryFromFoldedBody, canaryIOrL, canaryNormalizedPrefix, canaryBodyLength, hashCanary} from "./canary.js";
import {foldLetter} from "./foldLetter.js";
import {defaultFingerprintWords, WordGramHasher, type FingerprintMatcher} from "./fingerprints.js";
import type {CanaryBook, CanaryScannerOptions, ScanFinding, ScanStep} from "./types.js";

const defaultHoldBackForFingerprints = true;
const defaultScanAhead = true;

/** Normalised characters a canary takes: `CLRM` + 24. */
const normalizedCanaryLength = canaryNormalizedPrefix.length + canaryBodyLength;

/**
 * The scan-ahead, in the scanner's own units: a character is released only once the longest
 * canary the scanner can match (its 28 letters and digits, with any number of separators
 * between them) and the fingerprint window before it (8 words) have been read after it. So a
 * canary, or a fingerprint run, and the 8 words before it are never shown before they are judged.
 */
export const scanAhead = {letters: normalizedCanaryLength, words: defaultFingerprintWords} as const;
/** A folded body: base32, and `l` (`canaryIOrL`) for a letter that reads as `I` or `L`. */
const bodyPattern = /^[A-Z2-7l]*$/;
/** The prefix, folded: its `L` may be written with a letter that reads as `I` or `L` (`canaryIOrL`). */
const prefixPattern = /C[Ll]RM/g;
/** What may still grow into the prefix at the very end. */
const partialPrefix = /^(?:C|C[Ll]|C[Ll]R)$/;
const unicodeLetterOrDigit = /[\p{L}\p{N}]/u;
/** Stands for a letter that cannot be part of a canary, so that it breaks a candidate. */
const blocker = "#";
const combiningMarks = /\p{M}/gu;
const asciiLettersAndDigits = /^[A-Z0-9]+$/;

/**
 * ASCII normalisation: letters upper-cased, digits kept, everything else (spaces, line
 * breaks, hyphens, underscores, dots, any punctuation) dropped (0).
 */
const asciiNormalTable = (() => {
    const table = new Uint8Array(128);
    for (let code = 0; code < 128; code++) {
        if (code >= 0x30 && code <= 0x39 || code >= 0x41 && code <= 0x5a)
            table[code] = code;
        else if (code >= 0x61 && code <= 0x7a)
            table[code] = code - 0x20;
    }
    return table;
})();

/**
 * Scans a streamed cloud reply for canaries and fingerprints, across chunk boundaries.
 *
 * Canary matching runs on a normalised copy of the reply: letters and digits folded
 * (`foldLetter`: look-alike letters of any script, full-width and mathematical forms read as
 * the ASCII they imitate) and upper-cased, and every other character dropped (spaces, line
 * breaks, zero-width characters, hyphens, underscores, dots, any punctuation), each kept
 * character mapped back to its offset in the original text. Candidates are `CLRM` +
 * 24 base32 characters; the checksum decides. `feed()` returns only text that can no longer
 * be part of a canary (or, with fingerprints, of a matching run), so a blocked reply is cut
 * before its contaminated part is shown, and an echoed own canary is stripped.
 */
export class CanaryScanner {
    private readonly _conversationId: string;
    private readonly _requestId: string;
    private readonly _book: CanaryBook;
    private readonly _fingerprints: FingerprintMatcher | null;
    private readonly _hasher: WordGramHasher | null;
    private readonly _holdForFingerprints: boolean;
    private readonly _findings: ScanFinding[] = [];
    private readonly _stripSpans: Array<{start: number, end: number}> = [];
    /** Original text received but not yet released; starts at `_releasedUpTo`. */
    private _pending = "";
    private _releasedUpTo = 0;
    private _received = 0;
    /** Tail of the normalised text that may still hold a canary start. */
    private _normal = "";
    private _normalOffsets: number[] = [];
    /** First index in `_normal` not yet ruled out as a canary start. */
    private _scanFrom = 0;
    private _blocked = false;
    private _finished = false;
    private readonly _scanAhead: boolean;
    private readonly _scanAheadWords: number;
    /** Offsets of the letters and digits not yet released, and of the words that start among them. */
    private _letterOffsets: number[] = [];
    private _wordStarts: number[] = [];
    private _lastLetterEnd = -1;
    /** A high surrogate that ended the last chunk: read with the next chunk's first character. */
    private _carry = "";
    /** Matching runs that may still turn out to share a word with a common phrase: held back until decided. */
    private readonly _pendingMatches: Array<{index: number, hash: number, start: number, end: number, holdFrom: number}> = [];
    private _gramIndex = 0;
    private _lastCommonGram = -Infinity;

    public constructor(options: CanaryScannerOptions) {
        this._conversationId = options.conversationId;
        this._requestId = options.requestId;
        this._book = options.book;
        this._fingerprints = options.fingerprints != null && !options.fingerprints.isEmpty ? options.fingerprints : null;
        this._hasher = this._fingerprints != null ? new WordGramHasher(this._fingerprints.options) : null;
        this._holdForFingerprints = options.holdBackForFingerprints ?? defaultHoldBackForFingerprints;
        this._scanAhead = options.scanAhead ?? defaultScanAhead;
        this._scanAheadWords = this._hasher?.windowWords ?? scanAhead.words;
    }

    /** Scans a whole reply at once. */
    public static scanText(text: string, options: CanaryScannerOptions): ScanStep & {allFindings: ScanFinding[]} {
        const scanner = new CanaryScanner(options);
        const first = scanner.feed(text);
        const last = scanner.finish();
        return {
            text: first.text + last.text,
            findings: [...first.findings, ...last.findings],
            blocked: last.blocked,
            allFindings: [...scanner.findings]
        };
    }

    public get blocked() {
        return this._blocked;
    }

    /** Every finding so far. */
    public get findings(): readonly ScanFinding[] {
        return this._findings;
    }

    /** Characters received so far. */
    public get receivedLength() {
        return this._received;
    }

    /** Scans the next piece of the reply. Returns the text now safe to show and the new findings. */
    public feed(chunk: string): ScanStep {
        if (this._finished)
            throw new Error("CanaryScanner.feed() called after finish()");
        const findingsBefore = this._findings.length;
        if (this._blocked || chunk.length === 0)
            return this._step("", findingsBefore);

        const base = this._received - this._carry.length;
        this._received += chunk.length;
        this._pending += chunk;
        this._appendNormalized(this._carry + chunk, base);
        this._scanCanaries();

        if (this._hasher != null && !this._blocked)
            this._hasher.push(chunk, this._onGram);

        if (this._blocked)
            return this._step("", findingsBefore);
        return this._step(this._release(this._holdBoundary()), findingsBefore);
    }

    /** Ends the reply: releases what was held back (a canary cut off by the end is no canary). */
    public finish(): ScanStep {
        const findingsBefore = this._findings.length;
        if (this._finished)
            return this._step("", findingsBefore);
        this._finished = true;
        if (this._carry !== "" && !this._blocked) {
            const carry = this._carry;
            this._carry = "";
            this._appendNormalized(carry, this._received - carry.length, true);
            this._scanCanaries();
        }
        if (this._hasher != null && !this._blocked) {
            this._hasher.end(this._onGram);
            this._settlePendingMatches();
        }
        if (this._blocked)
            return this._step("", findingsBefore);
        return this._step(this._release(this._received), findingsBefore);
    }

    private _step(text: string, findingsBefore: number): ScanStep {
        return {text, findings: this._findings.slice(findingsBefore), blocked: this._blocked};
    }

    /** Appends the normalised form of `text`, which starts at offset `base`; a trailing high surrogate waits for the next chunk unless `last`. */
    private _appendNormalized(text: string, base: number, last = false) {
        let normal = "";
        const offsets = this._normalOffsets;
        let end = text.length;
        this._carry = "";
        const lastCode = text.charCodeAt(end - 1);
        if (!last && lastCode >= 0xd800 && lastCode <= 0xdbff) {
            this._carry = text.slice(end - 1);
            end--;
        }
        for (let i = 0; i < end;) {
            const code = text.charCodeAt(i);
            let width = 1;
            let mapped: string;
            if (code < 128) {
                const ascii = asciiNormalTable[code]!;
                mapped = ascii !== 0 ? String.fromCharCode(ascii) : "";
            } else {
                const point = text.codePointAt(i)!;
                width = point > 0xffff ? 2 : 1;
                mapped = readNonAscii(String.fromCodePoint(point));
            }
            if (mapped !== "") {
                normal += mapped;
                const offset = base + i;
                for (let k = 0; k < mapped.length; k++)
                    offsets.push(offset);
                if (this._scanAhead) {
                    if (offset !== this._lastLetterEnd)
                        this._wordStarts.push(offset);
                    for (let k = 0; k < mapped.length; k++)
                        this._letterOffsets.push(offset);
                    this._lastLetterEnd = offset + width;
                }
            }
            i += width;
        }
        this._normal += normal;
    }

    private _scanCanaries() {
        const normal = this._normal;
        let position = findPrefix(normal, this._scanFrom);
        while (position !== -1) {
            const bodyStart = position + canaryNormalizedPrefix.length;
            if (position + normalizedCanaryLength > normal.length) {
                // Incomplete: keep waiting only while what follows could still be a body.
                if (bodyPattern.test(normal.slice(bodyStart)))
                    break;
            } else {
                const body = normal.slice(bodyStart, bodyStart + canaryBodyLength);
                if (bodyPattern.test(body)) {
                    const canary = canaryFromFoldedBody(body);
                    if (canary != null) {
                        this._classify(canary, this._normalOffsets[position]!, this._endOfCharAt(this._normalOffsets[position + normalizedCanaryLength - 1]!));
                        if (this._blocked)
                            return;
                    }
                }
            }
            position = findPrefix(normal, position + 1);
        }

        if (position === -1) {
            // Only a partial prefix ("C", "CL", "CLR") at the very end can still grow into a canary.
            position = normal.length;
            for (let start = Math.max(0, normal.length - canaryNormalizedPrefix.length + 1); start < normal.length; start++) {
                if (partialPrefix.test(normal.slice(start))) {
                    position = start;
                    break;
                }
            }
        }
        this._scanFrom = position;

        // Forget the normalised text before the earliest possible start.
        if (position > 0) {
            this._normal = normal.slice(position);
            this._normalOffsets = this._normalOffsets.slice(position);
            this._scanFrom = 0;
        }
    }

    /** The offset after the character that starts at `offset` (still pending: a canary is held until judged). */
    private _endOfCharAt(offset: number) {
        const code = this._pending.charCodeAt(offset - this._releasedUpTo);
        return offset + (code >= 0xd800 && code <= 0xdbff ? 2 : 1);
    }

    private _classify(canary: string, start: number, end: number) {
        const canaryHash = hashCanary(canary);
        const planted = this._book.lookup(canaryHash);
        if (planted == null) {
            this._block({kind: "foreign-canary", blocking: true, canaryHash, start, end});
        } else if (planted.conversationId === this._conversationId && planted.requestId === this._requestId) {
            this._findings.push({kind: "prompt-echo", blocking: false, canaryHash, start, end});
            this._stripSpans.push({start, end});
        } else {
            this._block({kind: "cross-request", blocking: true, canaryHash, planted: {...planted}, start, end});
        }
    }

    /**
     * A matching run blocks once it cannot share a word with a common phrase any more: when the
     * `windowWords - 1` runs after it are known (or the reply ends) and none of them, nor of the
     * runs before it, is a common phrase. So a stock phrase with a word or two more on either side,
     * or two common phrases back to back, is not taken for another conversation; 8 words of it
     * that are no phrase's still block.
     */
    private readonly _onGram = (hash: number, start: number, end: number, capitalsAsLatinHash: number | null) => {
        const fingerprints = this._fingerprints;
        if (this._blocked || fingerprints == null)
            return;
        const index = this._gramIndex++;
        const reach = fingerprints.options.windowWords - 1;
        if (fingerprints.isCommonPhrase(hash) || (capitalsAsLatinHash != null && fingerprints.isCommonPhrase(capitalsAsLatinHash))) {
            this._lastCommonGram = index;
            this._pendingMatches.length = 0; // each shares a word with this phrase
            return;
        }
        const matching = fingerprints.matches(hash) ? hash : capitalsAsLatinHash != null && fingerprints.matches(capitalsAsLatinHash) ? capitalsAsLatinHash : null;
        if (index - this._lastCommonGram > reach && matching != null)
            this._pendingMatches.push({index, hash: matching, start, end, holdFrom: Math.min(start, this._scanAheadBoundary(end))});
        const due = this._pendingMatches[0];
        if (due != null && index - due.index >= reach)
            this._block({kind: "fingerprint", blocking: true, fingerprint: due.hash, start: due.start, end: due.end});
    };

    /** The reply ended: no later run can make a waiting match a phrase's, so it blocks. */
    private _settlePendingMatches() {
        const due = this._pendingMatches[0];
        if (due != null && !this._blocked)
            this._block({kind: "fingerprint", blocking: true, fingerprint: due.hash, start: due.start, end: due.end});
    }

    private _block(finding: ScanFinding) {
        this._findings.push(finding);
        this._blocked = true;
        this._pending = "";
    }

    /** Offset up to which the received text can be released. */
    private _holdBoundary() {
        let boundary = this._received;
        if (this._normal.length > 0)
            boundary = Math.min(boundary, this._normalOffsets[this._scanFrom] ?? this._received);
        if (this._hasher != null && this._holdForFingerprints) {
            const holdFrom = this._hasher.holdFrom;
            if (holdFrom != null)
                boundary = Math.min(boundary, holdFrom);
            const pending = this._pendingMatches[0];
            if (pending != null)
                boundary = Math.min(boundary, pending.holdFrom);
        }
        boundary = Math.min(boundary, this._scanAheadBoundary(this._received));
        if (this._carry !== "")
            boundary = Math.min(boundary, this._received - this._carry.length); // half a character, not yet read
        return Math.max(boundary, this._releasedUpTo);
    }

    /**
     * Up to where text before `front` may be released under the scan-ahead: the start of the
     * `words`-th word before the one holding the 28th letter or digit before `front`. Everything
     * unreleased while fewer have been read.
     */
    private _scanAheadBoundary(front: number): number {
        if (!this._scanAhead)
            return front;
        const letters = this._letterOffsets;
        let last = letters.length - 1;
        while (last >= 0 && letters[last]! >= front)
            last--;
        const anchorIndex = last - (scanAhead.letters - 1);
        if (anchorIndex < 0)
            return this._releasedUpTo;
        const anchor = letters[anchorIndex]!;
        const starts = this._wordStarts;
        let word = starts.length - 1;
        while (word >= 0 && starts[word]! > anchor)
            word--;
        const first = word - this._scanAheadWords;
        return first >= 0 ? starts[first]! : this._releasedUpTo;
    }

    /** Releases the pending text up to `boundary`, minus stripped own canaries. */
    private _release(boundary: number) {
        const from = this._releasedUpTo;
        if (boundary <= from)
            return "";
        let text = "";
        let cursor = from;
        for (const span of this._stripSpans) {
            if (span.end <= cursor || span.start >= boundary)
                continue;
            if (span.start > cursor)
                text += this._pending.slice(cursor - from, span.start - from);
            cursor = Math.min(boundary, span.end);
        }
        if (cursor < boundary)
            text += this._pending.slice(cursor - from, boundary - from);

        this._pending = this._pending.slice(boundary - from);
        this._releasedUpTo = boundary;
        if (this._scanAhead) {
            this._letterOffsets = dropBefore(this._letterOffsets, boundary);
            this._wordStarts = dropBefore(this._wordStarts, boundary);
        }
        while (this._stripSpans.length > 0 && this._stripSpans[0]!.end <= boundary)
            this._stripSpans.shift();
        return text;
    }
}

/** The offsets from `boundary` on (the list is in ascending order). */
function dropBefore(offsets: number[], boundary: number): number[] {
    let index = 0;
    while (index < offsets.length && offsets[index]! < boundary)
        index++;
    return index === 0 ? offsets : offsets.slice(index);
}

function findPrefix(normal: string, from: number): number {
    prefixPattern.lastIndex = from;
    return prefixPattern.exec(normal)?.index ?? -1;
}

/** Distinct code points whose reading is remembered. */
const maxCachedReadings = 1 << 16;
const readingCache = new Map<string, string>();

/**
 * A non-ASCII character as the canary matcher reads it: its fold, upper-cased, when that is ASCII
 * letters and digits (`canaryIOrL` for a caseless stroke that reads as `I` and `L` alike); nothing
 * for what is not a letter or digit (zero-width characters, other spaces, dashes, punctuation,
 * symbols, combining marks); else a blocker, a letter that cannot be part of a canary.
 */
function readNonAscii(char: string): string {
    let reading = readingCache.get(char);
    if (reading === undefined) {
        reading = readingOf(char);
        if (readingCache.size < maxCachedReadings)
            readingCache.set(char, reading);
    }
    return reading;
}

function readingOf(char: string): string {
    if (!unicodeLetterOrDigit.test(char))
        return "";
    const folded = foldLetter(char, "as-written").replace(combiningMarks, "");
    if (folded === "l" && char.toLowerCase() === char.toUpperCase())
        return canaryIOrL;
    const upper = folded.toUpperCase();
    return asciiLettersAndDigits.test(upper) ? upper : blocker;
}

import {canaryFromBody, canaryNormalizedPrefix, canaryBodyLength, hashCanary} from "./canary.js";
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
const bodyPattern = /^[A-Z2-7]*$/;
const unicodeLetterOrDigit = /[\p{L}\p{N}]/u;
/** Stands for a letter that cannot be part of a canary, so that it breaks a candidate. */
const blockerCode = 0x23; // "#"

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
 * Canary matching runs on a normalised copy of the reply: letters upper-cased (with NFKC,
 * so full-width letters count), digits kept, and every other character dropped (spaces,
 * line breaks, zero-width characters, hyphens, underscores, dots, any punctuation), each
 * kept character mapped back to its offset in the original text. Candidates are `CLRM` +
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
    private _lastLetterOffset = -2;
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

        const base = this._received;
        this._received += chunk.length;
        this._pending += chunk;
        this._appendNormalized(chunk, base);
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

    private _appendNormalized(chunk: string, base: number) {
        let normal = "";
        const offsets = this._normalOffsets;
        for (let i = 0; i < chunk.length; i++) {
            const code = chunk.charCodeAt(i);
            let mapped: number;
            if (code < 128)
                mapped = asciiNormalTable[code]!;
            else if (code >= 0xd800 && code <= 0xdfff)
                mapped = 0;
            else
                mapped = normalizeNonAscii(chunk[i]!);
            if (mapped !== 0) {
                normal += String.fromCharCode(mapped);
                offsets.push(base + i);
                if (this._scanAhead) {
                    if (base + i !== this._lastLetterOffset + 1)
                        this._wordStarts.push(base + i);
                    this._letterOffsets.push(base + i);
                    this._lastLetterOffset = base + i;
                }
            }
        }
        this._normal += normal;
    }

    private _scanCanaries() {
        const normal = this._normal;
        let position = normal.indexOf(canaryNormalizedPrefix, this._scanFrom);
        while (position !== -1) {
            const bodyStart = position + canaryNormalizedPrefix.length;
            if (position + normalizedCanaryLength > normal.length) {
                // Incomplete: keep waiting only while what follows could still be a body.
                if (bodyPattern.test(normal.slice(bodyStart)))
                    break;
            } else {
                const body = normal.slice(bodyStart, bodyStart + canaryBodyLength);
                if (bodyPattern.test(body)) {
                    const canary = canaryFromBody(body);
                    if (canary != null) {
                        this._classify(canary, this._normalOffsets[position]!, this._normalOffsets[position + normalizedCanaryLength - 1]! + 1);
                        if (this._blocked)
                            return;
                    }
                }
            }
            position = normal.indexOf(canaryNormalizedPrefix, position + 1);
        }

        if (position === -1) {
            // Only a partial prefix ("C", "CL", "CLR") at the very end can still grow into a canary.
            position = normal.length;
            for (let start = Math.max(0, normal.length - canaryNormalizedPrefix.length + 1); start < normal.length; start++) {
                if (canaryNormalizedPrefix.startsWith(normal.slice(start))) {
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
    private readonly _onGram = (hash: number, start: number, end: number) => {
        const fingerprints = this._fingerprints;
        if (this._blocked || fingerprints == null)
            return;
        const index = this._gramIndex++;
        const reach = fingerprints.options.windowWords - 1;
        if (fingerprints.isCommonPhrase(hash)) {
            this._lastCommonGram = index;
            this._pendingMatches.length = 0; // each shares a word with this phrase
            return;
        }
        if (index - this._lastCommonGram > reach && fingerprints.matches(hash))
            this._pendingMatches.push({index, hash, start, end, holdFrom: Math.min(start, this._scanAheadBoundary(end))});
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

function normalizeNonAscii(char: string): number {
    if (!unicodeLetterOrDigit.test(char))
        return 0; // zero-width characters, other spaces, dashes, punctuation, symbols: dropped
    const folded = char.normalize("NFKC").toUpperCase();
    if (folded.length === 1) {
        const code = folded.charCodeAt(0);
        if (code < 128 && asciiNormalTable[code] !== 0)
            return code;
    }
    return blockerCode;
}

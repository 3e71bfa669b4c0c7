import type {FingerprintMatcher} from "./fingerprints.js";

/** What the client remembers about a canary it planted (beside its hash). */
export type PlantedCanary = {
    conversationId: string,
    requestId: string
};

/**
 * Every canary this install has planted, looked up by `hashCanary(canary)` (hex SHA-256 of
 * the canonical `CLRM-…` string). Implemented over SQLite by the core, over a Map in tests.
 */
export interface CanaryBook {
    lookup(canaryHash: string): PlantedCanary | undefined;
}

/**
 * What the scanner found in a reply. Offsets are UTF-16 positions in the whole reply as
 * received, `end` exclusive. Findings never carry the canary or the matched text.
 * - `prompt-echo`: this request's own canary came back; it is stripped from the text, a warning.
 * - `cross-request`: our canary from another conversation or request; blocks.
 * - `foreign-canary`: a valid canary that is not ours, another tenant's data; blocks.
 * - `fingerprint`: 8+ words verbatim from another of the user's conversations, absent from
 *   this request; blocks.
 */
export type ScanFinding =
    | {kind: "prompt-echo", blocking: false, canaryHash: string, start: number, end: number}
    | {kind: "cross-request", blocking: true, canaryHash: string, planted: PlantedCanary, start: number, end: number}
    | {kind: "foreign-canary", blocking: true, canaryHash: string, start: number, end: number}
    | {kind: "fingerprint", blocking: true, fingerprint: number, start: number, end: number};

export type ScanFindingKind = ScanFinding["kind"];

export type ScanStep = {
    /** Reply text that is now safe to show, own canaries stripped. Always empty once blocked. */
    text: string,
    /** Findings made during this step. */
    findings: ScanFinding[],
    /** Whether the reply is blocked (by this step or an earlier one). */
    blocked: boolean
};

export type CanaryScannerOptions = {
    /** The conversation the request belongs to. */
    conversationId: string,
    /** The request whose reply is scanned. */
    requestId: string,
    book: CanaryBook,
    /**
     * Fingerprints of the user's other conversations minus those of this request
     * (`FingerprintIndex.excluding`). Defaults to none: no fingerprint matching.
     */
    fingerprints?: FingerprintMatcher,
    /**
     * Hold back the last words of the reply until they can no longer start a fingerprint
     * match, so that a leaked run is blocked before any of it is shown. Adds a delay of
     * `windowWords - 1` words. Only applies with `fingerprints`. Defaults to `true`.
     */
    holdBackForFingerprints?: boolean,
    /**
     * Release a character only once the canary form and the fingerprint window after it have
     * been scanned (`scanAhead`: 28 letters and digits, then 8 words), so that a canary or a
     * matching run and the 8 words before it are never shown before they are judged. Defaults to `true`.
     */
    scanAhead?: boolean
};

// unhomoglyph's table (confusables v13, every key one code point), read as JSON: the package's own
// function builds one regular expression of all 6,311 keys when it is imported, about 10 ms of CPU in
// every process that opens a core, for the few letters a reply ever has outside ASCII (#25).
import confusables from "unhomoglyph/data.json" with {type: "json"};

/**
 * What one letter, digit or mark reads as for matching, lower-case: the same string for the
 * letters a reader cannot tell apart, so that a canary or another conversation's text written
 * with look-alike letters (Cyrillic `е`, Greek `Ο`, mathematical `𝐂`, full-width `Ｃ`) is the text
 * it imitates.
 *
 * - ASCII is read as it is (lower-cased). Unicode's skeletons (TR39, `confusables.txt`) also map
 *   ASCII to ASCII (`m` to `rn`, `I` and `1` to `l`, `0` to `O`); applying those would merge canary
 *   characters (`I` and `L`) and change the length of plain text, so they are read the other way
 *   round: a non-ASCII letter whose skeleton is `rn` reads as `m`, one whose skeleton is `l` reads
 *   as `i` when it is a capital (Cyrillic `І`, Greek `Ι`) and as `l` otherwise. ASCII text folds
 *   to itself, and so does every canary.
 * - Anything else is decomposed (NFKD: full-width and mathematical letters, ligatures, roman
 *   numerals, accented letters into letter and mark); each part that is not ASCII is read through
 *   its skeleton (unhomoglyph's table, confusables v13), trying its two cases in the order `caseOrder`
 *   says (Cyrillic `м` has no Latin look-alike, its capital `М` has), and kept when the skeleton
 *   is ASCII letters and digits (marks kept); otherwise the part is only case-folded.
 *
 * Both sides of a match fold the same way: the fingerprints of the user's conversations and the
 * reply (`WordGramHasher`, lower case first), the canary format and the reply (`CanaryScanner`,
 * as written first, then upper-cased).
 */
export function foldLetter(char: string, caseOrder: LetterCaseOrder = "lower-first"): string {
    const code = char.codePointAt(0)!;
    if (code < 0x80)
        return char.toLowerCase();
    const cache = foldCaches[caseOrder];
    let folded = cache.get(code);
    if (folded === undefined) {
        folded = foldNonAscii(char, caseOrder);
        if (cache.size < maxCachedFolds)
            cache.set(code, folded);
    }
    return folded;
}

/**
 * Which case of a letter is read through its skeleton first. A case pair can imitate two Latin
 * letters (Greek `Ν` is N, `ν` is v; `Η` is H, `η` is n), and no fold can keep both look-alikes and
 * the pair together. Words are mostly lower-case and matched case-insensitively: `lower-first`, so
 * `ν` and `Ν` both read v. Canaries are capitals, and only their letters matter: `as-written`,
 * so `Ν` reads N.
 */
export type LetterCaseOrder = "lower-first" | "as-written";

/**
 * How a capital reads when it imitates a Latin capital, where that differs from `foldLetter`'s
 * reading (which is its small letter's): Greek `Ν` is `n` (`ν` is v), `Η` is `h`, `Υ` is `y`.
 * `null` for every other character.
 */
export function capitalReadAsLatin(char: string): string | null {
    const code = char.codePointAt(0)!;
    if (code < 0x80)
        return null;
    let reading = latinCapitalReadings.get(code);
    if (reading === undefined) {
        const asWritten = char !== char.toLowerCase() ? foldLetter(char, "as-written") : null;
        reading = asWritten != null && asWritten !== foldLetter(char) ? asWritten : null;
        if (latinCapitalReadings.size < maxCachedFolds)
            latinCapitalReadings.set(code, reading);
    }
    return reading;
}

/** Distinct code points whose fold is remembered: a reply of every letter in Unicode stays a few megabytes. */
const maxCachedFolds = 1 << 16;
const foldCaches: Record<LetterCaseOrder, Map<number, string>> = {"lower-first": new Map(), "as-written": new Map()};
const latinCapitalReadings = new Map<number, string | null>();
const mark = /\p{M}/u;
const asciiAlphanumeric = /[A-Za-z0-9]/;

function foldNonAscii(char: string, caseOrder: LetterCaseOrder): string {
    let folded = "";
    for (const part of char.normalize("NFKD")) {
        if (part.charCodeAt(0) < 0x80 || mark.test(part))
            folded += part.toLowerCase();
        else
            folded += readThroughSkeleton(part, caseOrder);
    }
    return folded;
}

function readThroughSkeleton(char: string, caseOrder: LetterCaseOrder): string {
    const caseFolded = char.toUpperCase().toLowerCase(); // final ς is σ
    const base = caseFolded.length === char.length ? caseFolded : char;
    const lower = base.toLowerCase();
    const upper = base.toUpperCase();
    const forms = lower === upper ? [base] : caseOrder === "as-written" && char === upper ? [upper, lower] : [lower, upper];
    for (const form of forms) {
        const skeleton = skeletonOf(form).normalize("NFKD");
        if (skeleton !== form && isAsciiWithMarks(skeleton)) {
            if (skeleton === "rn")
                return "m";
            if (skeleton === "l" && form === upper && lower !== upper)
                return "i";
            return skeleton.toLowerCase();
        }
    }
    return caseFolded;
}

const skeletons: Record<string, string | undefined> = confusables;

/** What `unhomoglyph(text)` returns: each code point replaced by its skeleton, when it has one. */
function skeletonOf(text: string): string {
    let skeleton = "";
    for (const char of text)
        skeleton += skeletons[char] ?? char;
    return skeleton;
}

/** ASCII letters and digits, with combining marks between them, and at least one letter or digit. */
function isAsciiWithMarks(text: string): boolean {
    let letters = 0;
    for (const part of text) {
        if (asciiAlphanumeric.test(part))
            letters++;
        else if (!mark.test(part))
            return false;
    }
    return letters > 0;
}

import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {canaryAlphabet, canaryChecksum, canaryPrefix, createCanary, hashCanary, type Canary} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex, type FingerprintMatcher} from "../../src/core/common/cloud/fingerprints.js";
import type {ScanFinding} from "../../src/core/common/cloud/types.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import {MapCanaryBook, testFingerprintKey} from "../helpers/cloudFixtures.js";
import {allProse, englishProseWithNumbers, greekProse, russianProse} from "../helpers/multilingualProse.js";

/**
 * #27: look-alike letters. A canary or another conversation's text written with letters of other
 * scripts that look the same (Cyrillic, Greek, Lisu, mathematical and full-width forms) is the
 * canary or the text it imitates: blocked like the plain one, across chunk boundaries; ordinary
 * prose in those scripts is never blocked.
 */

const cyrillic: Record<string, string> = {
    A: "А", B: "В", C: "С", E: "Е", H: "Н", I: "І", J: "Ј", K: "К", M: "М", O: "О", P: "Р", S: "Ѕ", T: "Т", X: "Х", Y: "У",
    a: "а", c: "с", e: "е", i: "і", j: "ј", o: "о", p: "р", s: "ѕ", x: "х", y: "у"
};
const greek: Record<string, string> = {
    A: "Α", B: "Β", E: "Ε", Z: "Ζ", H: "Η", I: "Ι", K: "Κ", M: "Μ", N: "Ν", O: "Ο", P: "Ρ", T: "Τ", X: "Χ", Y: "Υ",
    a: "α", i: "ι", k: "κ", o: "ο", p: "ρ", u: "υ", v: "ν", x: "χ"
};
/** Lisu capitals: no case of their own, so a stroke reads as `I` and `L` alike (ꓲ, ꓡ): the checksum decides. */
const lisu: Record<string, string> = {
    A: "ꓮ", B: "ꓐ", C: "ꓚ", D: "ꓓ", E: "ꓰ", F: "ꓝ", G: "ꓖ", H: "ꓧ", I: "ꓲ", J: "ꓙ", K: "ꓗ", L: "ꓡ", M: "ꓟ", N: "ꓠ",
    O: "ꓳ", P: "ꓑ", R: "ꓣ", S: "ꓢ", T: "ꓔ", U: "ꓴ", V: "ꓦ", W: "ꓪ", X: "ꓫ", Y: "ꓬ", Z: "ꓜ"
};
/** Mathematical bold letters and digits (outside the BMP: each is a surrogate pair). */
function mathBold(char: string) {
    const code = char.charCodeAt(0);
    if (code >= 0x41 && code <= 0x5a)
        return String.fromCodePoint(0x1d400 + code - 0x41);
    if (code >= 0x61 && code <= 0x7a)
        return String.fromCodePoint(0x1d41a + code - 0x61);
    if (code >= 0x30 && code <= 0x39)
        return String.fromCodePoint(0x1d7ce + code - 0x30);
    return char;
}
function fullWidth(char: string) {
    const code = char.charCodeAt(0);
    return code > 0x20 && code < 0x7f ? String.fromCharCode(code + 0xfee0) : char;
}

const scripts = {
    cyrillic: (char: string) => cyrillic[char] ?? char,
    greek: (char: string) => greek[char] ?? char,
    lisu: (char: string) => lisu[char.toUpperCase()] ?? char,
    "mathematical bold": mathBold,
    "full-width": fullWidth
} as const;
type Script = keyof typeof scripts;
const scriptNames = Object.keys(scripts) as Script[];

function writeIn(script: Script, text: string) {
    return Array.from(text, scripts[script]).join("");
}

/** Each character in a script of its own (and its case at random), as a model might mix them. */
function mixScripts(text: string, random: SeededRandom) {
    return Array.from(text, (char) => {
        const cased = random.chance(0.3) ? char.toLowerCase() : char;
        return scripts[random.pick(scriptNames)](cased);
    }).join("");
}

function chunksOf(text: string, size: number) {
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += size)
        chunks.push(text.slice(at, at + size)); // by UTF-16 unit: a size of 1 splits every surrogate pair
    return chunks;
}

function stream(scanner: CanaryScanner, chunks: string[]) {
    let shown = "";
    const findings: ScanFinding[] = [];
    for (const chunk of chunks) {
        const step = scanner.feed(chunk);
        shown += step.text;
        findings.push(...step.findings);
        if (step.blocked)
            break;
    }
    const last = scanner.finish();
    return {shown: shown + last.text, findings: [...findings, ...last.findings], blocked: scanner.blocked};
}

/** A canary whose random part has an `I` and an `L`, so that strokes with no case must be read both ways. */
function canaryWithIAndL(): Canary {
    for (;;) {
        const canary = createCanary();
        const random = canary.slice(5, 25);
        // At most 6 of them: the scanner tries 2^6 readings of a random part written with caseless strokes and no more
        // (canaryFromFoldedBody); about one canary in 4,000 has more, and the test drew one in 20 runs.
        if (random.includes("I") && random.includes("L") && (random.match(/[IL]/g) ?? []).length <= 6)
            return canary;
    }
}

describe("look-alike canaries", () => {
    const book = new MapCanaryBook();
    const otherConversation = book.plant("conv-b", "req-9");
    const options = {conversationId: "conv-a", requestId: "req-2", book};

    it("the issue's canary: Cyrillic С, М, К, Е, О, Р, А in a well-formed canary of another install is blocked", () => {
        const random = "7WKQIE6UOLC73P4VJWIA";
        const canary = canaryPrefix + random + canaryChecksum(random);
        const written = canary.replace(/[CMKEOPA]/g, (char) => cyrillic[char]!);
        expect(written).not.toBe(canary);
        expect(written.normalize("NFKC")).not.toContain(canary.slice(5)); // NFKC alone does not fold them
        const {findings, blocked} = stream(new CanaryScanner(options), chunksOf(`See ${written} here.`, 3));
        expect(blocked).toBe(true);
        expect(findings).toMatchObject([{kind: "foreign-canary", canaryHash: hashCanary(canary)}]);
    });

    for (const script of scriptNames) {
        it(`another conversation's canary written in ${script} letters is blocked as cross-request, split at every point, none of it shown`, () => {
            const written = writeIn(script, otherConversation);
            expect(written).not.toBe(otherConversation);
            const reply = `Sure, here it is: ${written} and some more words after it.`;
            for (const size of [1, 2, 3, 5, 8, 13]) {
                const {shown, findings, blocked} = stream(new CanaryScanner(options), chunksOf(reply, size));
                expect(blocked).toBe(true);
                expect(findings).toMatchObject([{kind: "cross-request", planted: {conversationId: "conv-b", requestId: "req-9"}}]);
                expect(reply.slice(findings[0]!.start, findings[0]!.end)).toBe(written);
                expect(reply.startsWith(shown)).toBe(true);
                expect(shown.length).toBeLessThanOrEqual(reply.indexOf(written));
            }
        });
    }

    it("a look-alike split between two chunks: half a surrogate pair, or a Cyrillic letter as the chunk's last character", () => {
        const written = writeIn("mathematical bold", otherConversation);
        const middle = written.indexOf("-") + 4; // 𝐂𝐋𝐑𝐌 and what follows are pairs of UTF-16 units: this cuts one in two
        expect(written.charCodeAt(middle - 1)).toBeGreaterThanOrEqual(0xd800);
        expect(written.charCodeAt(middle - 1)).toBeLessThanOrEqual(0xdbff);
        const split = stream(new CanaryScanner(options), [`a ${written.slice(0, middle)}`, `${written.slice(middle)} b`]);
        expect(split.findings).toMatchObject([{kind: "cross-request"}]);

        const cyrillicWritten = writeIn("cyrillic", otherConversation);
        const at = cyrillicWritten.search(/[А-я]/u) + 1;
        const byCyrillic = stream(new CanaryScanner(options), [cyrillicWritten.slice(0, at), cyrillicWritten.slice(at)]);
        expect(byCyrillic.findings).toMatchObject([{kind: "cross-request"}]);
    });

    it("foreign canaries in mixed scripts, mixed case, with separators, split at random points are blocked (property)", () => {
        const separators = [" ", "\u200B", "\u2060", "-", ".", "\u00A0"];
        fc.assert(fc.property(fc.integer({min: 1, max: 2 ** 30}), fc.array(fc.nat(200), {maxLength: 10}), (seed, cuts) => {
            const random = new SeededRandom(seed);
            const canary = random.chance(0.5) ? canaryWithIAndL() : createCanary();
            let written = "";
            for (const char of mixScripts(canary, random))
                written += char + (random.chance(0.2) ? random.pick(separators) : "");
            const reply = `Before ${written} after.`;
            const points = [...new Set(cuts.map((cut) => cut % reply.length))].sort((a, b) => a - b);
            const chunks = [0, ...points].map((point, index, all) => reply.slice(point, all[index + 1]));
            const {findings, blocked} = stream(new CanaryScanner({...options, book: {lookup: () => undefined}}), chunks);
            expect(blocked).toBe(true);
            expect(findings).toMatchObject([{kind: "foreign-canary", canaryHash: hashCanary(canary)}]);
        }), {seed: 27, numRuns: 400});
    });

    it("verifies the checksum on the folded form: strokes with no case are read as I and as L until it matches; a wrong checksum is no canary", () => {
        const canary = canaryWithIAndL();
        const strokes = canary.replace(/[IL]/g, (char) => (char === "I" ? "ǀ" : "ꓲ")); // Latin dental click, Lisu I: no case
        const found = stream(new CanaryScanner({...options, book: {lookup: () => undefined}}), chunksOf(`x ${strokes} y`, 2));
        expect(found.findings).toMatchObject([{kind: "foreign-canary", canaryHash: hashCanary(canary)}]);

        const position = 10;
        const replaced = canaryAlphabet[(canaryAlphabet.indexOf(canary[position]!) + 1) % 32]!;
        const broken = writeIn("cyrillic", canary.slice(0, position) + replaced + canary.slice(position + 1));
        const honest = `x ${broken} y`;
        const passed = stream(new CanaryScanner({...options, book: {lookup: () => undefined}}), chunksOf(honest, 2));
        expect(passed.blocked).toBe(false);
        expect(passed.shown).toBe(honest);
    });

    it("this request's own canary echoed in look-alike letters is stripped, not blocked", () => {
        const own = book.plant("conv-a", "req-2");
        const reply = `The marker is ${writeIn("greek", own)}, as you asked.`;
        const {shown, findings, blocked} = stream(new CanaryScanner(options), chunksOf(reply, 4));
        expect(blocked).toBe(false);
        expect(findings.map((finding) => finding.kind)).toEqual(["prompt-echo"]);
        expect(shown).toBe("The marker is , as you asked.");
    });
});

describe("look-alike text of another conversation", () => {
    const book = new MapCanaryBook();
    const secret = "The spare key to the office is taped under the second drawer of the oak desk near the window.";
    const index = new FingerprintIndex({key: testFingerprintKey});
    index.addConversation([secret]);
    index.addConversation(russianProse.conversations);
    index.addConversation(greekProse.conversations);
    const scan = (reply: string, size: number, fingerprints: FingerprintMatcher = index.excluding(["What should I cook tonight?"])) =>
        stream(new CanaryScanner({conversationId: "c", requestId: "r", book, fingerprints}), chunksOf(reply, size));

    const leaks: Array<[string, string, RegExp]> = [
        ["English with Cyrillic е, а, о", secret.replace(/[eao]/g, (char) => cyrillic[char]!), /spare|key|office/i],
        ["English with Greek ο, α, ι, κ and Cyrillic е", secret.replace(/[oaik]/g, (char) => greek[char]!).replace(/e/g, "е"), /spare|key|office/i],
        ["English in mathematical bold", writeIn("mathematical bold", secret), /spare|key|office/i],
        ["Russian in capitals with Latin A, E, O, P, C, X, Y, M, T, K, H, B for the Cyrillic letters",
            russianProse.conversations[1]!.toUpperCase().replace(/[АЕОРСХУМТКНВ]/g, (char) => "AEOPCXYMTKHB"["АЕОРСХУМТКНВ".indexOf(char)]!), /ЛИФТ/],
        ["Greek with Latin o, a, i, k, v, p, t, x", greekProse.conversations[0]!.replace(/[οαικνρτχ]/g, (char) => "oaikvptx"["οαικνρτχ".indexOf(char)]!), /παραλία/],
        // Ν, Η and Υ read N, H and Y here, though their small letters ν, η and υ read v, n and u.
        ["English in capitals with Greek Α, Β, Ε, Η, Ι, Κ, Μ, Ν, Ο, Ρ, Τ, Χ, Υ for the Latin capitals", secret.toUpperCase().replace(/[ABEHIKMNOPTXY]/g, (char) => greek[char]!), /SPARE|KEY|OFFICE/],
        ["the Greek in capitals (Ν, Η, Υ among them)", greekProse.conversations[0]!.toUpperCase(), /ΠΑΡΑΛΊΑ|ΠΑΡΑΛΙΑ/]
    ];
    for (const [what, leak, words] of leaks) {
        it(`blocks ${what}, before a word of the run is shown, in chunks of 1 to 7 characters`, () => {
            const reply = `Here is what I found. ${leak} That is all.`;
            expect(scan(`Here is what I found. ${leak.replace(/./gu, (char) => (/\p{L}/u.test(char) ? "z" : char))} That is all.`, 3).blocked).toBe(false);
            for (const size of [1, 2, 3, 7]) {
                const {shown, findings, blocked} = scan(reply, size);
                expect(blocked).toBe(true);
                expect(findings.map((finding) => finding.kind)).toEqual(["fingerprint"]);
                expect(shown.normalize("NFKC")).not.toMatch(words);
                expect(reply.startsWith(shown)).toBe(true);
                expect(shown.length).toBeLessThanOrEqual(reply.indexOf(leak));
            }
        });
    }

    it("the request's own text in look-alike letters is not another conversation's", () => {
        const reply = `You wrote: ${secret.replace(/[eao]/g, (char) => cyrillic[char]!)}`;
        expect(scan(reply, 4, index.excluding([`Remember this: ${secret}`])).blocked).toBe(false);
    });
});

describe("ordinary prose in Russian, Greek, French and English is never blocked", () => {
    it("honest replies on the same topics as the user's other conversations: false blocks 0", () => {
        const book = new MapCanaryBook();
        const index = new FingerprintIndex({key: testFingerprintKey});
        for (const set of Object.values(allProse))
            for (const conversation of set.conversations)
                index.addConversation([conversation, `${conversation} ${book.plant(`other-${index.size}`, "r")}`]);
        const random = new SeededRandom(2027);
        const outcomes: Array<{language: string, blocked: boolean, kinds: string[]}> = [];
        let requestNumber = 0;
        for (const [language, set] of Object.entries(allProse)) {
            const replies = [...set.replies, set.replies.join("\n\n"), set.replies.join(" ").toUpperCase()];
            for (const reply of replies) {
                for (const size of [1, 3, 16, 4096]) {
                    const requestId = `req-${requestNumber++}`;
                    const own = book.plant("conv-now", requestId);
                    const fingerprints = index.excluding([`You are a helpful assistant. ${own}`, random.pick(set.conversations).slice(0, 80)]);
                    const scanner = new CanaryScanner({conversationId: "conv-now", requestId, book, fingerprints});
                    const {shown, blocked, findings} = stream(scanner, chunksOf(reply, size));
                    outcomes.push({language, blocked, kinds: findings.map((finding) => finding.kind)});
                    if (!blocked)
                        expect(shown).toBe(reply);
                }
            }
        }
        const falseBlocks = outcomes.filter((outcome) => outcome.blocked);
        const perLanguage = Object.fromEntries(Object.keys(allProse).map((language) =>
            [language, `${outcomes.filter((outcome) => outcome.language === language && outcome.blocked).length} of ${outcomes.filter((outcome) => outcome.language === language).length}`]));
        console.log(`[look-alikes] honest prose, false blocks: ${falseBlocks.length} of ${outcomes.length} scans (goal 0)`, perLanguage);
        expect(falseBlocks).toEqual([]);
    });

    it("scanner speed on a 10,000-character reply (printed, not asserted)", () => {
        const book = new MapCanaryBook();
        const index = new FingerprintIndex({key: testFingerprintKey});
        for (const set of Object.values(allProse))
            for (const conversation of set.conversations)
                index.addConversation([conversation]);
        const tenThousand = (text: string) => text.repeat(Math.ceil(10_000 / text.length)).slice(0, 10_000);
        const replies = {
            english: tenThousand(englishProseWithNumbers.replies.join(" ")),
            russian: tenThousand(russianProse.replies.join(" ")),
            greek: tenThousand(greekProse.replies.join(" ")),
            "mixed look-alikes": tenThousand(mixScripts(englishProseWithNumbers.replies.join(" "), new SeededRandom(5)))
        };
        const figures: Record<string, string> = {};
        for (const [name, reply] of Object.entries(replies)) {
            const times: number[] = [];
            for (let run = 0; run < 7; run++) {
                const scanner = new CanaryScanner({conversationId: "c", requestId: "r", book, fingerprints: index.excluding([])});
                const started = performance.now();
                const {shown, blocked} = stream(scanner, chunksOf(reply, 16));
                times.push(performance.now() - started);
                expect(blocked).toBe(false);
                expect(shown).toBe(reply);
            }
            times.sort((a, b) => a - b);
            figures[name] = `${times[3]!.toFixed(1)} ms (median of 7)`;
        }
        console.log("[look-alikes] scanning a 10,000-character reply in 16-character chunks, canaries and fingerprints:", figures);
    });
});

import {describe, expect, it} from "vitest";
import {createCanary} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex, type FingerprintMatcher} from "../../src/core/common/cloud/fingerprints.js";
import type {ScanFindingKind} from "../../src/core/common/cloud/types.js";
import {mangleText} from "../../tools/cloudSim/mangleText.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import {MapCanaryBook, testFingerprintKey} from "../helpers/cloudFixtures.js";

/**
 * Detection rates of the scanner, in process: at least 1,000 generated cases per kind, each
 * reply streamed in random chunks through a scanner configured as the cloud client would.
 */
const casesPerKind = 1_000;
const random = new SeededRandom(20261027);

const vocabulary = (
    "the a an and or but so because when while after before if then than this that these those i you he she we they it " +
    "my your his her our their its me him us them is was are were be been have has had do does did will would can could " +
    "should may might must go went come came see saw look looked make made take took give gave find found think thought " +
    "know knew want wanted need needed like liked love loved tell told ask asked work worked call called try tried " +
    "time day night morning week year home house school office car road city park garden tree water food money book " +
    "letter phone doctor friend mother father sister brother child people man woman team project meeting report plan " +
    "idea problem question answer reason story note list number account bank card address street name family trip " +
    "good bad big small new old long short early late happy sad quick slow quiet loud warm cold red blue green black " +
    "white first last next other same different important private simple hard easy really very just still also again " +
    "soon never always often sometimes here there today tomorrow yesterday about into over under with without from to of in on at by for"
).split(" ");

function sentence(words: number) {
    const picked = Array.from({length: words}, () => random.pick(vocabulary));
    picked[0] = picked[0]![0]!.toUpperCase() + picked[0]!.slice(1);
    return picked.join(" ") + random.pick([".", ".", "!", "?", ",", ";"]);
}

function paragraph(sentences: number) {
    return Array.from({length: sentences}, () => sentence(random.between(5, 16))).join(" ");
}

// The user's other conversations, fingerprinted; our canaries planted in earlier requests.
const book = new MapCanaryBook();
const otherConversations = Array.from({length: 300}, () => Array.from({length: 6}, () => paragraph(random.between(2, 6))));
const index = new FingerprintIndex({key: testFingerprintKey});
for (const messages of otherConversations)
    index.addConversation(messages);
const ourEarlierCanaries = Array.from({length: 500}, (_, i) => book.plant(`conv-${i % 50}`, `req-${i}`));

type Case = {reply: string, requestTexts: string[], requestId: string};
type Outcome = {blocked: boolean, kinds: ScanFindingKind[], shownText: string};

function scanInChunks({reply, requestTexts, requestId}: Case): Outcome {
    const fingerprints: FingerprintMatcher = index.excluding(requestTexts);
    const scanner = new CanaryScanner({conversationId: "conv-now", requestId, book, fingerprints});
    let shownText = "";
    for (let at = 0; at < reply.length && !scanner.blocked;) {
        const size = random.between(1, 16);
        shownText += scanner.feed(reply.slice(at, at + size)).text;
        at += size;
    }
    shownText += scanner.finish().text;
    return {blocked: scanner.blocked, kinds: scanner.findings.map((finding) => finding.kind), shownText};
}

/** A request as the client would send it: a fresh canary in the system message. */
function newRequest(caseNumber: number) {
    const requestId = `now-${caseNumber}`;
    const canary = book.plant("conv-now", requestId);
    const user = paragraph(random.between(1, 3));
    return {requestId, canary, requestTexts: [`You are a helpful assistant. Marker: ${canary}`, user], user};
}

/** A stale fragment of another request's prompt (another tenant's, or ours from elsewhere) around its canary. */
function staleFragmentWithCanary() {
    const canary = random.chance(0.5) ? createCanary() : random.pick(ourEarlierCanaries);
    const prompt = `system: You are a helpful assistant. Marker: ${canary}\nuser: ${paragraph(random.between(1, 4))}`;
    const at = prompt.indexOf(canary);
    const start = random.int(at + 1);
    const end = at + canary.length + random.int(prompt.length - at - canary.length + 1);
    return prompt.slice(start, end);
}

function insertInto(reply: string, fragment: string) {
    const spaces = [...reply.matchAll(/ /g)].map((match) => match.index);
    const at = spaces.length > 0 ? random.pick(spaces) : reply.length;
    return `${reply.slice(0, at)} ${fragment} ${reply.slice(at)}`;
}

function rate(outcomes: Outcome[]) {
    return outcomes.filter((outcome) => outcome.blocked).length / outcomes.length;
}

describe("scanner detection rates", () => {
    const rates: Record<string, string> = {};

    it(`blocks every verbatim canary leak (${casesPerKind} cases)`, () => {
        const outcomes = Array.from({length: casesPerKind}, (_, i) => {
            const request = newRequest(i);
            return scanInChunks({...request, reply: insertInto(paragraph(random.between(1, 4)), staleFragmentWithCanary())});
        });
        rates.verbatim = `${(rate(outcomes) * 100).toFixed(2)}%`;
        expect(rate(outcomes)).toBe(1);
        expect(outcomes.every((outcome) => outcome.kinds.some((kind) => kind === "foreign-canary" || kind === "cross-request"))).toBe(true);
    });

    it(`blocks paraphrased canary leaks (mangled as the simulator does) at 99% or more (${casesPerKind} cases)`, () => {
        const outcomes = Array.from({length: casesPerKind}, (_, i) => {
            const request = newRequest(i + casesPerKind);
            const fragment = mangleText(staleFragmentWithCanary(), random);
            return scanInChunks({...request, reply: insertInto(paragraph(random.between(1, 4)), fragment)});
        });
        rates.paraphrase = `${(rate(outcomes) * 100).toFixed(2)}%`;
        expect(rate(outcomes)).toBeGreaterThanOrEqual(0.99);
    });

    it(`blocks canary-free leaks of 8+ words of another conversation at 95% or more (${casesPerKind} cases)`, () => {
        const outcomes = Array.from({length: casesPerKind}, (_, i) => {
            const request = newRequest(i + 2 * casesPerKind);
            const words = random.pick(random.pick(otherConversations)).split(" ");
            const length = Math.min(words.length, random.between(8, 30));
            const start = random.int(words.length - length + 1);
            let fragment = words.slice(start, start + length).join(" ");
            if (random.chance(0.3))
                fragment = fragment.toUpperCase();
            if (random.chance(0.3))
                fragment = fragment.replace(/[.,;!?]/g, () => random.pick([" -", ":", "", " ..."]));
            if (random.chance(0.3) && start > 0)
                fragment = words[start - 1]!.slice(random.int(words[start - 1]!.length)) + " " + fragment;
            const outcome = scanInChunks({...request, reply: insertInto(paragraph(random.between(1, 4)), fragment)});
            if (outcome.blocked)
                expect(outcome.kinds).toEqual(["fingerprint"]);
            return outcome;
        });
        rates.fingerprint = `${(rate(outcomes) * 100).toFixed(2)}%`;
        expect(rate(outcomes)).toBeGreaterThanOrEqual(0.95);
    });

    it(`never blocks honest replies, including echoes of the request and of its own canary (${casesPerKind} cases)`, () => {
        let echoes = 0;
        const outcomes = Array.from({length: casesPerKind}, (_, i) => {
            const request = newRequest(i + 3 * casesPerKind);
            let reply = paragraph(random.between(1, 5));
            const requestTexts = [...request.requestTexts];
            if (random.chance(0.3)) {
                // The user pasted text that is also in another conversation; the reply quotes it.
                const pasted = random.pick(random.pick(otherConversations));
                requestTexts.push(pasted);
                reply = insertInto(reply, pasted);
            }
            if (random.chance(0.3))
                reply = insertInto(reply, request.user);
            let echoed = false;
            if (random.chance(0.2)) {
                reply = insertInto(reply, random.chance(0.5) ? request.canary : mangleText(request.canary, random));
                echoed = true;
                echoes++;
            }
            const outcome = scanInChunks({requestId: request.requestId, requestTexts, reply});
            if (echoed) {
                expect(outcome.kinds).toContain("prompt-echo");
                expect(outcome.shownText.replace(/[^A-Za-z0-9]/g, "").toUpperCase()).not.toContain(request.canary.replace("-", ""));
            }
            return outcome;
        });
        rates.honestFalseBlocks = `${(rate(outcomes) * 100).toFixed(2)}% (${echoes} with own-canary echoes)`;
        expect(rate(outcomes)).toBe(0);
    });

    it("measures scanner throughput and prints the rates", () => {
        const text = Array.from({length: 2_000}, () => paragraph(8)).join("\n");
        const requestTexts = ["You are a helpful assistant.", "Tell me something."];
        const measure = (chunkSize: number, withFingerprints: boolean) => {
            const scanner = new CanaryScanner({
                conversationId: "conv-now", requestId: "bench", book,
                fingerprints: withFingerprints ? index.excluding(requestTexts) : undefined
            });
            const started = performance.now();
            let shown = 0;
            for (let at = 0; at < text.length; at += chunkSize)
                shown += scanner.feed(text.slice(at, at + chunkSize)).text.length;
            shown += scanner.finish().text.length;
            const seconds = (performance.now() - started) / 1000;
            expect(shown).toBe(text.length);
            return `${(text.length / seconds / 1e6).toFixed(1)} MB/s`;
        };
        measure(8, true); // warm-up
        const throughput = {
            "8-char chunks, fingerprints": measure(8, true),
            "8-char chunks, canaries only": measure(8, false),
            "4 KiB chunks, fingerprints": measure(4096, true)
        };
        console.log(`Scanner detection over ${casesPerKind} cases per kind:`, rates);
        console.log(`Scanner throughput on ${(text.length / 1e6).toFixed(2)} M chars (${index.size} fingerprints):`, throughput);
    });
});

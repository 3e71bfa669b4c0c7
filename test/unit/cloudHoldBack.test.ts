import {afterAll, describe, expect, it} from "vitest";
import {createCanary} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner, scanAhead} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex, type FingerprintMatcher} from "../../src/core/common/cloud/fingerprints.js";
import type {CloudClient, CloudStreamEvent} from "../../src/core/node/cloud/CloudClient.js";
import {runGuardedCloudTurn} from "../../src/core/node/cloud/runGuardedCloudTurn.js";
import {mangleText} from "../../tools/cloudSim/mangleText.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import {memoryLedger, testFingerprintKey} from "../helpers/cloudFixtures.js";
import {testSeed} from "../helpers/testSeed.js";

const leakedWords = "Quartermaster Okonkwo wired the Zanzibar marmalade deposit to the Vexholm trust";
const random = new SeededRandom(testSeed("cloud hold-back"));
const cases = 500;
const honestReplies = 1_000;

/** What the page was shown, with how much of the reply had arrived each time. */
type Streamed = {text: string, shownAt: Array<{receivedChars: number, shownChars: number}>, receivedChars: number, shownBeforeEnd: number};

/** A cloud that streams the text in chunks of the given sizes (random when none), then ends normally. */
function scriptedCloud(text: string, progress: {received: number, ended: boolean}, chunkSize?: number): CloudClient {
    return {
        endpoint: {baseURL: "http://127.0.0.1:1/v1", model: "scripted", apiKey: null, contextLimit: null},
        contextLimit: async () => null,
        countTokens: async (value: string) => ({tokens: Math.ceil(value.length / 4), countedBy: "estimate"}),
        async *streamChat(): AsyncGenerator<CloudStreamEvent> {
            for (let at = 0; at < text.length;) {
                const size = chunkSize ?? random.between(1, 40);
                const piece = text.slice(at, at + size);
                at += size;
                progress.received += piece.length;
                yield {type: "text", text: piece};
            }
            progress.ended = true;
            yield {type: "end", finishReason: "stop", model: "scripted", usage: {promptTokens: 40, completionTokens: 60}};
        }
    } as unknown as CloudClient;
}

async function run(text: string, {holdBackChars, fingerprints, chunkSize}: {holdBackChars?: number, fingerprints?: FingerprintMatcher, chunkSize?: number} = {}) {
    const progress = {received: 0, ended: false};
    const streamed: Streamed = {text: "", shownAt: [], receivedChars: 0, shownBeforeEnd: 0};
    const result = await runGuardedCloudTurn({
        client: scriptedCloud(text, progress, chunkSize), ledger: memoryLedger(), conversationId: "c1", requestId: "r1",
        messages: [{role: "user", content: "Tell me a story."}], maxTokens: 64,
        holdBackChars, fingerprints,
        onText: (piece) => {
            streamed.text += piece;
            streamed.shownAt.push({receivedChars: progress.received, shownChars: streamed.text.length});
            if (!progress.ended)
                streamed.shownBeforeEnd = streamed.text.length;
        }
    });
    streamed.receivedChars = progress.received;
    return {result, streamed};
}

const vocabulary = ("the little fox found a shiny red ball and rolled it down the hill while her brother " +
    "watched from the old bridge near the river where ducks swam in the warm afternoon sun").split(" ");
const prose = (words: number) => Array.from({length: words}, () => random.pick(vocabulary)).join(" ") + ".";

/** Another user conversation, fingerprinted: its text must never come back. */
const otherConversation = "Margarethe keeps the spare garage code 4471 taped behind the boiler in the cellar of the house on Birchwood " +
    "Lane, and her passport renewal appointment is on the ninth at the consulate downtown next to the bakery.";
const index = new FingerprintIndex({key: testFingerprintKey});
index.addConversation([otherConversation]);

/** A leaked fragment: another tenant's text up to 8 words before its canary (mangled or not), or a run of another conversation, maybe from mid-word. */
function leakedFragment(): {fragment: string, kind: "canary" | "fingerprint"} {
    if (random.chance(0.5)) {
        const words = leakedWords.split(" ");
        const context = words.slice(words.length - random.between(0, 8)).join(" ");
        const canary = random.chance(0.5) ? mangleText(createCanary(), random) : createCanary();
        return {fragment: `${context} ${canary}${random.chance(0.5) ? " and the rest of their ledger" : ""}`.trim(), kind: "canary"};
    }
    const words = otherConversation.split(" ");
    const length = random.between(8, Math.min(30, words.length));
    const start = random.int(words.length - length + 1);
    let fragment = words.slice(start, start + length).join(" ");
    if (start > 0 && random.chance(0.5))
        fragment = words[start - 1]!.slice(random.int(words[start - 1]!.length)) + " " + fragment; // from the middle of a word
    return {fragment, kind: "fingerprint"};
}

const figures: Record<string, unknown> = {};

describe("a cloud reply streams just behind its scan", () => {
    afterAll(() => {
        console.info(`[cloud hold-back] scan-ahead of ${scanAhead.letters} letters or digits (a canary, whatever separators) + ${scanAhead.words} words ` +
            `(the fingerprint window), no fixed character hold-back (was 2,048): ${JSON.stringify(figures)}`);
    });

    it("control: without the scan-ahead, the words of a leaked page before its canary are shown before the block", () => {
        const text = `Once upon a time the sea was calm. ${leakedWords}, ${createCanary()} the end of the page.`;
        const scanner = new CanaryScanner({conversationId: "c1", requestId: "r1", book: memoryLedger(), scanAhead: false});
        let shown = "";
        for (let at = 0; at < text.length && !scanner.blocked; at += 7)
            shown += scanner.feed(text.slice(at, at + 7)).text;
        expect(scanner.blocked).toBe(true);
        expect(shown).toContain("Vexholm");
    });

    it("a canary and the 8 words before it are never shown: the blocked reply streams none of them", async () => {
        const {result, streamed} = await run(`Once upon a time the sea was calm. ${leakedWords.split(" ").slice(-8).join(" ")}, ${createCanary()} the end of the page.`);
        expect(result).toMatchObject({blocked: true, text: "", verdict: {kind: "foreign-canary"}});
        expect(streamed.text).not.toMatch(/Zanzibar|marmalade|Vexholm|CLRM/i);
    });

    it(`no byte of a leaked fragment is released before its block (${cases} seeded cases: canaries with 8 words of context, mangled or not; runs of another conversation, from mid-word)`, async () => {
        let canaryCases = 0;
        for (let i = 0; i < cases; i++) {
            const {fragment, kind} = leakedFragment();
            const before = prose(random.between(1, 40));
            const text = `${before} ${fragment} ${prose(random.between(0, 30))}`;
            const {result, streamed} = await run(text, {fingerprints: index.excluding([])});
            expect(result.blocked, text).toBe(true);
            expect(streamed.text.length, `case ${i}: shown ${JSON.stringify(streamed.text.slice(before.length))} of ${JSON.stringify(fragment)}`)
                .toBeLessThanOrEqual(before.length + 1);
            if (kind === "canary")
                canaryCases++;
        }
        figures.leakedFragments = `${cases} blocked with 0 of their bytes shown (${canaryCases} canary, ${cases - canaryCases} fingerprint)`;
    });

    it(`a short honest reply streams: its first characters are shown before it ends, and text trails the scan by a few words (${honestReplies} replies)`, async () => {
        const lags: number[] = [];
        const firstShownAt: number[] = [];
        let streamedBeforeEnd = 0;
        for (let i = 0; i < honestReplies; i++) {
            const text = prose(random.between(30, 80));
            const {result, streamed} = await run(text, {fingerprints: index.excluding([])});
            expect(result.blocked).toBe(false);
            expect(streamed.text).toBe(text);
            if (streamed.shownBeforeEnd > 0)
                streamedBeforeEnd++;
            firstShownAt.push(streamed.shownAt[0]!.receivedChars);
            for (const {receivedChars, shownChars} of streamed.shownAt.slice(0, -1))
                lags.push(receivedChars - shownChars);
        }
        const short = await run("The little fox found a shiny red ball and rolled it down the hill while her brother watched from the old bridge.", {chunkSize: 4});
        expect(short.streamed.shownBeforeEnd).toBeGreaterThan(0);
        expect(short.streamed.text).toBe(short.result.text);
        expect(streamedBeforeEnd).toBe(honestReplies);

        lags.sort((a, b) => a - b);
        firstShownAt.sort((a, b) => a - b);
        figures.holdBackChars = {median: lags[Math.floor(lags.length / 2)], p99: lags[Math.floor(lags.length * 0.99)], max: lags.at(-1)};
        figures.firstTextAfterChars = {median: firstShownAt[Math.floor(firstShownAt.length / 2)], max: firstShownAt.at(-1)};
        figures.shortRepliesStreaming = `${streamedBeforeEnd}/${honestReplies} (${short.streamed.text.length}-char reply: first ${short.streamed.shownBeforeEnd} chars shown before its end)`;
        // Far below the old 2,048 characters: a few words and a canary's worth of letters.
        expect(lags.at(-1)!).toBeLessThan(400);
    });

    it("a longer fixed hold-back can still be asked for: the text then trails by at least that", async () => {
        const text = prose(400);
        const {streamed} = await run(text, {holdBackChars: 1500});
        expect(streamed.text).toBe(text);
        for (const {receivedChars, shownChars} of streamed.shownAt.slice(0, -1))
            expect(receivedChars - shownChars).toBeGreaterThanOrEqual(1500);
    });
});

import {afterAll, describe, expect, it} from "vitest";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex, type FingerprintIndexOptions, type FingerprintMatchOptions} from "../../src/core/common/cloud/fingerprints.js";
import {stockPhrases} from "../../src/core/common/cloud/stockPhrases.js";
import type {CanaryBook} from "../../src/core/common/cloud/types.js";
import {testFingerprintKey} from "../helpers/cloudFixtures.js";
import {testSeed} from "../helpers/testSeed.js";
import {SeededRandom} from "./helpers/seededRandom.js";

const replies = 1_000;
const leaks = 1_000;
const conversations = 200;
const random = new SeededRandom(testSeed("stock phrases"));

const vocabulary = (
    "river garden kitchen window letter bicycle market morning evening doctor teacher neighbour cousin project budget " +
    "meeting report invoice account ticket station museum library holiday weekend summer winter recipe dinner lunch " +
    "blue green quiet early late small large warm cold new old careful quick slow happy tired busy " +
    "walked cooked painted wrote fixed carried planted visited ordered booked moved opened closed called found " +
    "the a my our their his her this that some every another with near under over after before during about " +
    "maple harbour copper lantern orchard valley meadow pepper saffron violin marble canyon willow"
).split(" ");

/**
 * Common phrases people and models write that the shipped list does not carry: they show how
 * far skipping runs found in many conversations (maxConversations) goes on its own.
 */
const unlistedPhrases = [
    "it was really lovely to catch up with you yesterday",
    "thank you ever so much for all the help with the move",
    "i will be working from home for the rest of the week",
    "could you remind me what time the train leaves tomorrow",
    "we had a wonderful time at the beach with the kids",
    "i am so excited for the trip next month with everyone",
    "let us meet at the usual place at half past six",
    "the weather has been absolutely beautiful all week long here",
    "i finally finished reading the book you lent me last month",
    "please give my love to your parents when you see them",
    "we should definitely do this again some time very soon",
    "i just got home and i am completely exhausted after today",
    "here is a quick summary of what we talked about today",
    "below you will find the answers to your questions in order",
    "i went through your notes and made a few small changes",
    "the short answer is yes but there are a few caveats"
];

function prose(words: number) {
    const picked = Array.from({length: words}, () => random.pick(vocabulary));
    return picked.join(" ") + ".";
}

function phrase() {
    return random.next() < 0.6 ? random.pick(stockPhrases) : random.pick(unlistedPhrases);
}

/** A sentence-cased quote of a common phrase, as it appears in a message. */
function quoted(text: string) {
    return text[0]!.toUpperCase() + text.slice(1) + random.pick([".", "!", ".", ","]);
}

/** Every conversation's private prose (what a real leak carries), apart from the common phrases around it. */
const privateProse: string[] = [];

/** A message: private prose, with common phrases at its start and end as people write them. */
function message() {
    const own = prose(random.int(8, 40));
    privateProse.push(own);
    const parts = [own];
    if (random.next() < 0.5)
        parts.unshift(quoted(phrase()));
    if (random.next() < 0.5)
        parts.push(quoted(phrase()));
    if (random.next() < 0.2)
        parts.push(quoted(phrase()));
    return parts.join(" ");
}

const history = Array.from({length: conversations}, () => Array.from({length: random.int(4, 11)}, message));
const honestReplies = Array.from({length: replies}, () => {
    const parts = [prose(random.int(10, 40))];
    const quotes = random.int(1, 4);
    for (let i = 0; i < quotes; i++)
        parts.splice(random.int(0, parts.length + 1), 0, quoted(phrase()));
    return {reply: parts.join(" "), request: prose(random.int(6, 20))};
});
/** Real leaks: 8 to 30 words of another conversation's private prose, inside an honest reply. */
const leakedReplies = Array.from({length: leaks}, () => {
    const words = random.pick(privateProse).split(" ");
    const length = Math.min(words.length, random.int(8, 31));
    const start = random.int(0, words.length - length + 1);
    return {reply: `${prose(random.int(5, 20))} ${words.slice(start, start + length).join(" ")} ${prose(random.int(5, 20))}`, request: prose(10)};
});

const book: CanaryBook = {lookup: () => undefined};

function falseBlocks(indexOptions: Partial<FingerprintIndexOptions>, match: FingerprintMatchOptions, cases: Array<{reply: string, request: string}>) {
    const index = new FingerprintIndex({key: testFingerprintKey, ...indexOptions});
    for (const messages of history)
        index.addConversation(messages);
    return cases.filter(({reply, request}) =>
        CanaryScanner.scanText(reply, {conversationId: "now", requestId: "r", book, fingerprints: index.excluding([request], match)}).blocked).length;
}

const figures: Record<string, string> = {};

/**
 * Fingerprints used to block any reply that shared 8 words with another conversation, so stock
 * phrases ("thank you very much for your help today") blocked honest replies. On a generated
 * history of 200 conversations and 1,000 honest replies quoting common phrases (a fixed seed),
 * the false blocks before (no stock list, no limit on how common a run is: what the index did)
 * and after (the shipped stock list, runs in more than 4 conversations skipped), and the real
 * leaks of private text that are still blocked.
 */
describe("fingerprints skip stock phrases and runs common to many conversations", () => {
    afterAll(() => {
        console.info(`[stock phrases] ${stockPhrases.length} shipped phrases; on ${replies} honest replies quoting common phrases ` +
            `(${conversations} conversations of history): ${JSON.stringify(figures)}`);
    });

    it("the shipped list: a few hundred lower-case phrases of 8 or more words, no duplicates", () => {
        expect(stockPhrases.length).toBeGreaterThanOrEqual(300);
        expect(new Set(stockPhrases).size).toBe(stockPhrases.length);
        for (const entry of stockPhrases) {
            expect(entry.match(/[\p{L}\p{N}]+/gu)!.length, entry).toBeGreaterThanOrEqual(8);
            expect(entry, entry).toBe(entry.toLowerCase());
        }
    });

    it(`false blocks on ${replies} honest replies fall from many to (almost) none`, () => {
        const before = falseBlocks({stockPhrases: []}, {maxConversations: Infinity}, honestReplies);
        const listOnly = falseBlocks({}, {maxConversations: Infinity}, honestReplies);
        const after = falseBlocks({}, {}, honestReplies);
        figures.before = `${before} (${(before / replies * 100).toFixed(1)}%)`;
        figures.stockListOnly = `${listOnly} (${(listOnly / replies * 100).toFixed(1)}%)`;
        figures.after = `${after} (${(after / replies * 100).toFixed(1)}%)`;
        expect(before).toBeGreaterThan(replies / 4);
        expect(after).toBeLessThanOrEqual(replies / 100);
    });

    it(`real leaks of another conversation's private text are still blocked: ${leaks} of ${leaks}`, () => {
        const missed = leaks - falseBlocks({}, {}, leakedReplies);
        figures.leaksBlocked = `${leaks - missed}/${leaks}`;
        expect(missed).toBe(0);
    });
});

import {describe, expect, it} from "vitest";
import {createCanary, hashCanary} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {FingerprintIndex, fingerprintText} from "../../src/core/common/cloud/fingerprints.js";
import type {CanaryScannerOptions, ScanFinding} from "../../src/core/common/cloud/types.js";
import {MapCanaryBook, testFingerprintKey} from "../helpers/cloudFixtures.js";

function streamThrough(options: CanaryScannerOptions, chunks: string[]) {
    const scanner = new CanaryScanner(options);
    const shown: string[] = [];
    const findings: ScanFinding[] = [];
    for (const chunk of chunks) {
        const step = scanner.feed(chunk);
        shown.push(step.text);
        findings.push(...step.findings);
        if (step.blocked)
            break;
    }
    const last = scanner.finish();
    shown.push(last.text);
    findings.push(...last.findings);
    return {text: shown.join(""), shown, findings, blocked: scanner.blocked};
}

function charChunks(text: string, size = 3) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += size)
        chunks.push(text.slice(i, i + size));
    return chunks;
}

describe("CanaryScanner verdicts", () => {
    const book = new MapCanaryBook();
    const ownThisRequest = book.plant("conv-a", "req-2");
    const ownEarlierRequest = book.plant("conv-a", "req-1");
    const ownOtherConversation = book.plant("conv-b", "req-9");
    const foreign = createCanary();
    const options = {conversationId: "conv-a", requestId: "req-2", book};

    it("passes clean text through unchanged", () => {
        const reply = "Once upon a time, there was a little girl named Lily. CLR is not CLRM-TOO-SHORT.";
        const {text, findings, blocked} = streamThrough(options, charChunks(reply, 2));
        expect(blocked).toBe(false);
        expect(findings).toEqual([]);
        expect(text).toBe(reply);
    });

    it("strips this request's own canary (prompt echo) and warns", () => {
        const reply = `Sure. The marker is ${ownThisRequest.toLowerCase().split("").join(" ")}, as asked.`;
        const {text, findings, blocked} = streamThrough(options, charChunks(reply, 5));
        expect(blocked).toBe(false);
        expect(findings.map((finding) => finding.kind)).toEqual(["prompt-echo"]);
        expect(findings[0]!.blocking).toBe(false);
        expect(text).toBe("Sure. The marker is , as asked.");
    });

    it("blocks our canary from an earlier request of the same conversation as cross-request", () => {
        const {findings, blocked} = streamThrough(options, charChunks(`a ${ownEarlierRequest} b`, 4));
        expect(blocked).toBe(true);
        expect(findings).toMatchObject([{kind: "cross-request", planted: {conversationId: "conv-a", requestId: "req-1"}}]);
    });

    it("blocks our canary from another conversation as cross-request", () => {
        const {findings} = streamThrough(options, [`x${ownOtherConversation}`]);
        expect(findings).toMatchObject([{kind: "cross-request", planted: {conversationId: "conv-b"}}]);
    });

    it("blocks a valid canary that is not ours as another tenant's data, before showing any of it", () => {
        const mangled = foreign.split("").join("\u200B").replace(/-/, "_");
        const reply = `Here you go: ${mangled} and more text after it`;
        const {shown, findings, blocked} = streamThrough(options, charChunks(reply, 1));
        expect(blocked).toBe(true);
        expect(findings).toMatchObject([{kind: "foreign-canary", blocking: true, canaryHash: hashCanary(foreign)}]);
        // Nothing: the 3 words before the canary are within the scan-ahead (8 words), held back with it.
        const visible = shown.join("");
        expect(visible).toBe("");
        const finding = findings[0]!;
        expect(finding.start).toBe(reply.indexOf("C"));
        expect(finding.end).toBe(reply.indexOf(mangled) + mangled.length);
    });

    it("never puts the canary itself into findings", () => {
        const {findings} = streamThrough(options, [foreign]);
        expect(JSON.stringify(findings)).not.toContain(foreign.slice(5));
    });

    it("keeps stripping echoes while holding back for fingerprints", () => {
        const index = new FingerprintIndex({key: testFingerprintKey});
        index.addConversation(["completely unrelated words that nobody will ever say in this reply today"]);
        const reply = `one two ${ownThisRequest} three four five six seven eight nine ten eleven`;
        const result = streamThrough({...options, fingerprints: index.excluding([])}, charChunks(reply, 7));
        expect(result.blocked).toBe(false);
        expect(result.text).toBe("one two  three four five six seven eight nine ten eleven");
    });
});

describe("CanaryScanner fingerprints", () => {
    const book = new MapCanaryBook();
    const secret = "My bank account number at Riverside Credit Union is 4417 and the PIN is written on the fridge.";
    const index = new FingerprintIndex({key: testFingerprintKey});
    index.addConversation([secret, "Thanks, I will remember that for the next time we talk."]);
    index.addConversation(["Another conversation about gardening tomatoes in raised beds during a wet summer."]);

    it("blocks 8 verbatim words from another conversation, case-insensitive and punctuation-tolerant", () => {
        const fingerprints = index.excluding(["What is the weather like?"]);
        const reply = "The weather is fine. BANK ACCOUNT number -- at riverside, credit union: is 4417! Anyway.";
        const {shown, findings, blocked} = streamThrough({conversationId: "c", requestId: "r", book, fingerprints}, charChunks(reply, 4));
        expect(blocked).toBe(true);
        expect(findings).toMatchObject([{kind: "fingerprint", blocking: true}]);
        // The matching run was held back: none of its words were shown.
        expect(shown.join("")).not.toMatch(/bank/i);
        expect(reply.slice(findings[0]!.start, findings[0]!.end)).toBe("BANK ACCOUNT number -- at riverside, credit union: is");
    });

    it("does not block 7 words, nor runs present in this request", () => {
        const sevenWords = streamThrough({conversationId: "c", requestId: "r", book, fingerprints: index.excluding([])},
            ["My bank account number at Riverside Credit. Then something else entirely different."]);
        expect(sevenWords.blocked).toBe(false);

        const quoted = "As you wrote: my bank account number at Riverside Credit Union is 4417.";
        const fingerprints = index.excluding([`Please repeat this: ${secret}`]);
        const echoed = streamThrough({conversationId: "c", requestId: "r", book, fingerprints}, charChunks(quoted, 6));
        expect(echoed.blocked).toBe(false);
        expect(echoed.text).toBe(quoted);
    });

    it("can ignore phrases common to many conversations: by default those in more than 4", () => {
        const common = new FingerprintIndex({key: testFingerprintKey, stockPhrases: []});
        const boilerplate = "Our meeting notes are in the shared folder under this week's date.";
        const scan = (fingerprints: ReturnType<FingerprintIndex["excluding"]>) =>
            CanaryScanner.scanText(boilerplate, {conversationId: "c", requestId: "r", book, fingerprints}).blocked;
        for (let i = 0; i < 4; i++)
            common.addConversation([boilerplate, `conversation ${i} has its own private words number ${i} here and there`]);
        expect(scan(common.excluding([]))).toBe(true); // in 4 conversations: still matched by default
        expect(scan(common.excluding([], {maxConversations: 2}))).toBe(false);
        common.addConversation([boilerplate]);
        expect(scan(common.excluding([]))).toBe(false); // in 5: a phrase of the user's, not one conversation's
        expect(scan(common.excluding([], {maxConversations: Infinity}))).toBe(true);
    });

    it("counts a conversation once per phrase, however often it says it and however its stored fingerprints are given", () => {
        const boilerplate = "Our meeting notes are in the shared folder under this week's date.";
        const hashes = fingerprintText(boilerplate, {key: testFingerprintKey});
        const scan = (index: FingerprintIndex) =>
            CanaryScanner.scanText(boilerplate, {conversationId: "c", requestId: "r", book, fingerprints: index.excluding([])}).blocked;
        for (const given of ["a Set", "an array with repeats"] as const) {
            const index = new FingerprintIndex({key: testFingerprintKey, stockPhrases: []});
            for (let i = 0; i < 4; i++)
                index.addConversationHashes(given === "a Set" ? hashes : [...hashes, ...hashes, ...hashes]);
            expect(scan(index), `${given}: in 4 conversations, still matched`).toBe(true);
            index.addConversation([boilerplate, boilerplate, boilerplate]);
            expect(scan(index), `${given}: in 5 conversations, a phrase of the user's`).toBe(false);
        }
    });

    it("never matches the stock phrases, wherever they occur", () => {
        const withStock = new FingerprintIndex({key: testFingerprintKey});
        const without = new FingerprintIndex({key: testFingerprintKey, stockPhrases: []});
        const history = "Thank you very much for your help today. I hope this email finds you well.";
        withStock.addConversation([history]);
        without.addConversation([history]);
        const reply = "Sure. Thank you very much for your help today! Also: I hope this email finds you well.";
        expect(withStock.stockRuns).toBeGreaterThan(300);
        expect(CanaryScanner.scanText(reply, {conversationId: "c", requestId: "r", book, fingerprints: withStock.excluding([])}).blocked).toBe(false);
        expect(CanaryScanner.scanText(reply, {conversationId: "c", requestId: "r", book, fingerprints: without.excluding([])}).blocked).toBe(true);
    });

    it("a stock phrase with a word or two more, or two phrases back to back, is not another conversation; 8 private words next to one are", () => {
        const phrases = new FingerprintIndex({key: testFingerprintKey});
        const privateWords = "the spare key hides under the blue flowerpot by the shed";
        phrases.addConversation([`See you soon. Thank you very much for your help today, Maria. Have a great weekend and see you on monday! ${privateWords}.`]);
        const scan = (reply: string) => streamThrough({conversationId: "c", requestId: "r", book, fingerprints: phrases.excluding([])}, charChunks(reply, 5));
        expect(scan("Sure! Thank you very much for your help today, Maria.").blocked).toBe(false);
        expect(scan("Oh, see you soon. Thank you very much for your help today").blocked).toBe(false);
        expect(scan("today, Maria. Have a great weekend and see you on monday! Bye.").blocked).toBe(false);

        const leak = scan(`By the way: see you on monday! ${privateWords}, as you asked.`);
        expect(leak.blocked).toBe(true);
        // The leaked run was held back until it was decided: not a word of the private text was shown.
        expect(leak.shown.join("")).not.toMatch(/spare|flowerpot/);
    });

    it("hashes the same text the same way across chunk boundaries", () => {
        const whole = fingerprintText(secret, {key: testFingerprintKey});
        expect(whole.size).toBe(secret.split(/\s+/).length - 7);
        for (const hash of whole)
            expect(index.has(hash)).toBe(true);
        expect(fingerprintText(secret.toUpperCase().replaceAll(" ", " ,\n "), {key: testFingerprintKey})).toEqual(whole);
        // Another install's key: not one fingerprint in common.
        const other = fingerprintText(secret, {key: new Uint8Array(32).fill(1)});
        expect([...other].filter((hash) => whole.has(hash))).toEqual([]);
    });

    it("releases everything at finish when nothing matched", () => {
        const reply = "one two three four five six seven eight nine";
        const scanner = new CanaryScanner({conversationId: "c", requestId: "r", book, fingerprints: index.excluding([])});
        const first = scanner.feed(reply);
        expect(first.text.length).toBeLessThan(reply.length);
        expect(first.text + scanner.finish().text).toBe(reply);
    });
});

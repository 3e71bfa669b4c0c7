import {createHash, randomBytes} from "node:crypto";
import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {
    base32Encode, canaryAlphabet, canaryChecksum, canaryLength, canaryPrefix, createCanary, hashCanary, isValidCanary
} from "../../src/core/common/cloud/canary.js";
import {CanaryScanner} from "../../src/core/common/cloud/CanaryScanner.js";
import {sha256Hex} from "../../src/core/common/cloud/sha256.js";
import type {CanaryBook, ScanFinding} from "../../src/core/common/cloud/types.js";

const emptyBook: CanaryBook = {lookup: () => undefined};
const base32Char = fc.constantFrom(...canaryAlphabet.split(""));
const randomPart = fc.string({unit: base32Char, minLength: 20, maxLength: 20});
const separators = [" ", "\n", "\r\n", "\t", "\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF", "-", "_", ".", "\u2011", "\u00A0"];

function withChecksum(random: string) {
    return canaryPrefix + random + canaryChecksum(random);
}

function scanChunks(chunks: string[]) {
    const scanner = new CanaryScanner({conversationId: "c", requestId: "r", book: emptyBook});
    let text = "";
    const findings: ScanFinding[] = [];
    for (const chunk of chunks) {
        const step = scanner.feed(chunk);
        text += step.text;
        findings.push(...step.findings);
    }
    const last = scanner.finish();
    findings.push(...last.findings);
    return {text: text + last.text, findings, blocked: last.blocked};
}

function splitAt(text: string, cuts: number[]) {
    const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
    const chunks: string[] = [];
    let previous = 0;
    for (const point of points) {
        chunks.push(text.slice(previous, point));
        previous = point;
    }
    chunks.push(text.slice(previous));
    return chunks;
}

describe("canary format", () => {
    it("is CLRM- plus 24 base32 characters with a valid checksum", () => {
        const canary = createCanary();
        expect(canary).toMatch(/^CLRM-[A-Z2-7]{24}$/);
        expect(canary).toHaveLength(canaryLength);
        expect(isValidCanary(canary)).toBe(true);
    });

    it("defines the checksum as the first 4 base32 characters of SHA-256(CLRM- + random)", () => {
        for (let i = 0; i < 50; i++) {
            const random = base32Encode(randomBytes(13)).slice(0, 20);
            const digest = createHash("sha256").update(`CLRM-${random}`, "ascii").digest();
            expect(canaryChecksum(random)).toBe(base32Encode(digest).slice(0, 4));
        }
    });

    it("hashes canaries with SHA-256 (the pure-JS SHA-256 agrees with node:crypto)", () => {
        const canary = createCanary();
        expect(hashCanary(canary)).toBe(createHash("sha256").update(canary).digest("hex"));
        fc.assert(fc.property(fc.uint8Array({maxLength: 300}), (bytes) => {
            expect(sha256Hex(bytes)).toBe(createHash("sha256").update(bytes).digest("hex"));
        }), {seed: 1, numRuns: 300});
    });

    it("rejects wrong checksums and wrong shapes", () => {
        const canary = createCanary();
        const random = canary.slice(5, 25);
        const checksum = canary.slice(25);
        const wrong = checksum.split("").map((c) => canaryAlphabet[(canaryAlphabet.indexOf(c) + 1) % 32]).join("");
        expect(isValidCanary(canaryPrefix + random + wrong)).toBe(false);
        expect(isValidCanary(canary.toLowerCase())).toBe(false);
        expect(isValidCanary(canary + "A")).toBe(false);
        expect(isValidCanary(canary.slice(0, -1))).toBe(false);
        expect(isValidCanary("CLRM-" + "0".repeat(24))).toBe(false);
        expect(isValidCanary("CLRX" + canary.slice(4))).toBe(false);
    });

    it("property: every created canary validates, also from any byte source", () => {
        fc.assert(fc.property(fc.uint8Array({minLength: 20, maxLength: 20}), (bytes) => {
            const canary = createCanary((target) => target.set(bytes));
            expect(isValidCanary(canary)).toBe(true);
        }), {seed: 2, numRuns: 500});
        for (let i = 0; i < 200; i++)
            expect(isValidCanary(createCanary())).toBe(true);
    });

    it("property: any single-character change of the random part invalidates (but for ~2^-20 chance)", () => {
        let survived = 0;
        let runs = 0;
        fc.assert(fc.property(randomPart, fc.nat(19), fc.integer({min: 1, max: 31}), (random, index, delta) => {
            const canary = withChecksum(random);
            const replaced = canaryAlphabet[(canaryAlphabet.indexOf(random[index]!) + delta) % 32]!;
            const mutated = canary.slice(0, 5 + index) + replaced + canary.slice(6 + index);
            runs++;
            if (isValidCanary(mutated))
                survived++;
        }), {seed: 3, numRuns: 2000});
        expect(runs).toBe(2000);
        expect(survived).toBe(0);
    });

    it("property: obfuscated canaries split over random chunk boundaries are still found", () => {
        const obfuscated = fc.record({
            random: randomPart,
            upper: fc.array(fc.boolean(), {minLength: 29, maxLength: 29}),
            inserts: fc.array(fc.array(fc.constantFrom(...separators), {maxLength: 3}), {minLength: 29, maxLength: 29}),
            before: fc.string({maxLength: 40}),
            after: fc.string({maxLength: 40}),
            cuts: fc.array(fc.nat(400), {maxLength: 12})
        });
        fc.assert(fc.property(obfuscated, ({random, upper, inserts, before, after, cuts}) => {
            const canary = withChecksum(random);
            let mangled = "";
            for (let i = 0; i < canary.length; i++) {
                const char = canary[i]!;
                mangled += upper[i] === true ? char : char.toLowerCase();
                if (i < canary.length - 1)
                    mangled += inserts[i]!.join("");
            }
            const reply = `${before} ${mangled} ${after}`;
            const {findings, blocked} = scanChunks(splitAt(reply, cuts));
            expect(blocked).toBe(true);
            expect(findings.map((finding) => finding.kind)).toEqual(["foreign-canary"]);
            const finding = findings[0]!;
            expect(reply.slice(finding.start, finding.end).replace(/[^a-z0-9]/gi, "").toUpperCase()).toBe(canary.replace("-", ""));
        }), {seed: 4, numRuns: 1000});
    });

    it("ignores canary-shaped strings with a wrong checksum", () => {
        const canary = createCanary();
        const broken = canary.slice(0, -1) + (canary.endsWith("A") ? "B" : "A");
        const {text, findings, blocked} = scanChunks(splitAt(`x ${broken} y`, [3, 9, 20]));
        expect(blocked).toBe(false);
        expect(findings).toEqual([]);
        expect(text).toBe(`x ${broken} y`);
    });
});

describe("plantCanaries", () => {
    it("plants one canary in the system message and more through long messages", async () => {
        const {plantCanaries} = await import("../../src/core/common/cloud/plantCanaries.js");
        const long = "word ".repeat(1000);
        const {messages, canaries} = plantCanaries([{role: "user", content: "hi"}, {role: "user", content: long}], {charsPerCanary: 1000});
        expect(messages[0]!.role).toBe("system");
        expect(messages[0]!.content).toContain(canaries[0]);
        expect(canaries.length).toBeGreaterThanOrEqual(1 + 4);
        expect(canaries.length).toBeLessThanOrEqual(1 + 5);
        expect(canaries.every((canary) => isValidCanary(canary))).toBe(true);
        expect(messages[2]!.content.replace(/ CLRM-[A-Z2-7]{24} /g, "")).toBe(long);

        const withSystem = plantCanaries([{role: "system", content: "Be brief."}, {role: "user", content: "hi"}]);
        expect(withSystem.messages).toHaveLength(2);
        expect(withSystem.messages[0]!.content.startsWith("Be brief.\n\n")).toBe(true);
        expect(withSystem.canaries).toHaveLength(1);
    });
});

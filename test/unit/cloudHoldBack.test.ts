import {describe, expect, it} from "vitest";
import {createCanary} from "../../src/core/common/cloud/canary.js";
import type {CloudClient, CloudStreamEvent} from "../../src/core/node/cloud/CloudClient.js";
import {runGuardedCloudTurn} from "../../src/core/node/cloud/runGuardedCloudTurn.js";
import {memoryLedger} from "../helpers/cloudFixtures.js";

const leakedWords = "Quartermaster Okonkwo wired the Zanzibar marmalade deposit to the Vexholm trust";

/** A cloud that streams the given pieces in small chunks, then ends normally. */
function scriptedCloud(pieces: string[]): CloudClient {
    const text = pieces.join("");
    return {
        endpoint: {baseURL: "http://127.0.0.1:1/v1", model: "scripted", apiKey: null, contextLimit: null},
        contextLimit: async () => null,
        countTokens: async (value: string) => ({tokens: Math.ceil(value.length / 4), countedBy: "estimate"}),
        async *streamChat(): AsyncGenerator<CloudStreamEvent> {
            for (let at = 0; at < text.length; at += 7)
                yield {type: "text", text: text.slice(at, at + 7)};
            yield {type: "end", finishReason: "stop", model: "scripted", usage: {promptTokens: 40, completionTokens: 60}};
        }
    } as unknown as CloudClient;
}

async function run(pieces: string[], holdBackChars?: number) {
    const streamed: string[] = [];
    const result = await runGuardedCloudTurn({
        client: scriptedCloud(pieces), ledger: memoryLedger(), conversationId: "c1", requestId: "r1",
        messages: [{role: "user", content: "Tell me a story."}], maxTokens: 64,
        holdBackChars, onText: (piece) => streamed.push(piece)
    });
    return {result, streamed: streamed.join("")};
}

describe("a cloud reply streams behind its scan", () => {
    // Another tenant's page, its canary some way into it, as the incident's stale pages come back.
    const leak = ["Once upon a time the sea was calm. ", `${leakedWords} and more of it, ${createCanary()} `, "the end of the page."];

    it("without a hold-back, the part of a leaked page before its canary is streamed before the reply is blocked", async () => {
        const {result, streamed} = await run(leak, 0);
        expect(result.blocked).toBe(true);
        expect(streamed).toContain("Okonkwo");
    });

    it("by default, a blocked reply streams none of the leak, nor a canary", async () => {
        const {result, streamed} = await run(leak);
        expect(result).toMatchObject({blocked: true, text: "", verdict: {kind: "foreign-canary"}});
        expect(streamed).not.toMatch(/Okonkwo|marmalade|CLRM/i);
    });

    it("a reply that passes is streamed whole: behind the scan while long, the rest at the end", async () => {
        const sentence = "The little fox found a shiny red ball and rolled it down the hill. ";
        const long = sentence.repeat(60);
        const seenWhileStreaming: number[] = [];
        const streamed: string[] = [];
        const result = await runGuardedCloudTurn({
            client: scriptedCloud([long]), ledger: memoryLedger(), conversationId: "c1", requestId: "r1",
            messages: [{role: "user", content: "Tell me a story."}], maxTokens: 64,
            onText: (piece) => {
                streamed.push(piece);
                seenWhileStreaming.push(streamed.join("").length);
            }
        });
        expect(result.blocked).toBe(false);
        expect(streamed.join("")).toBe(result.text);
        expect(result.text).toBe(long);
        // Text started to flow before the end: only the last 2048 characters waited for it.
        expect(seenWhileStreaming.length).toBeGreaterThan(1);
        expect(seenWhileStreaming.at(-2)!).toBeLessThanOrEqual(long.length - 2048);
    });
});

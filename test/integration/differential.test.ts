import {describe, expect, it} from "vitest";
import {compareProbes, probeGreedyReply, type ProbeRequest, type ProbeResult} from "../../src/core/node/selftest/probe.js";
import {runCli} from "../../tools/spawnCli.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {testSeed} from "../helpers/testSeed.js";

const modelPath = requireTestModel();
const words = ["cat", "dog", "park", "ball", "tree", "sun", "happy", "red", "big", "girl", "boy", "bird", "house", "cake", "friend", "rain"];
const pairs = 20;

function randomSentence(random: () => number, length: number) {
    return Array.from({length}, () => words[Math.floor(random() * words.length)]).join(" ");
}

function seededRandom(seed: number) {
    let state = seed >>> 0;
    return () => {
        state = (state * 1664525 + 1013904223) >>> 0;
        return state / 2 ** 32;
    };
}

describe.skipIf(modelPath == null)("differential isolation proof", () => {
    it(`B's greedy reply and first-token probabilities after A are bit-identical to B in a fresh process (${pairs} random pairs)`, async () => {
        const seed = testSeed("differential", "CLEANROOM_DIFF_SEED");
        const random = seededRandom(seed);
        const requests = Array.from({length: pairs}, (_, index) => ({
            secret: `secret ${Math.floor(random() * 2 ** 48).toString(16)} ${randomSentence(random, 12)}`,
            keepAAlive: index % 2 === 1,
            b: {systemPrompt: randomSentence(random, 4), prompt: `Once upon a time ${randomSentence(random, 6)}`, maxTokens: 24} satisfies ProbeRequest
        }));

        // Fresh processes, two at a time (two cores).
        const fresh: ProbeResult[] = new Array(pairs);
        const queue = [...requests.keys()];
        await Promise.all([0, 1].map(async () => {
            for (let index = queue.shift(); index != null; index = queue.shift()) {
                const {b} = requests[index]!;
                fresh[index] = JSON.parse(await runCli([
                    "selftest-probe", "--model", modelPath!, "--threads", "1", "--context-size", "512",
                    "--system", b.systemPrompt, "--prompt", b.prompt, "--max-tokens", String(b.maxTokens)
                ])) as ProbeResult;
            }
        }));

        const {core} = await createTestCore(modelPath!, {threads: 1, contextSize: 512});
        const mismatches: string[] = [];
        try {
            for (const [index, request] of requests.entries()) {
                const a = core.createConversation({settings: {systemPrompt: "Keep this safe."}});
                await core.sendMessage({conversationId: a.id, text: request.secret, maxTokens: 24, temperature: 0});
                if (!request.keepAAlive)
                    expect((await core.closeConversation(a.id))?.verified).toBe(true);

                const afterA = await probeGreedyReply(core, request.b);
                const comparison = compareProbes(afterA, fresh[index]!);
                if (!comparison.identical)
                    mismatches.push(`pair ${index}: ${JSON.stringify(comparison)}`);
                expect(afterA.firstTokenProbabilities.length).toBeGreaterThan(100);
                await core.closeConversation(a.id);
            }
        } finally {
            await core.close();
        }
        expect(mismatches, `seed ${seed}`).toEqual([]);
    }, 600_000); // 20 fresh processes: about 30 s on a quiet 2-core machine, several times that under load
});

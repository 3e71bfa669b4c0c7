import {describe, expect, it} from "vitest";
import {compareProbes, probeGreedyReply, type ProbeRequest, type ProbeResult} from "../../src/core/node/selftest/probe.js";
import {runCli} from "../../tools/spawnCli.js";
import {asLocalTurn} from "../helpers/coreServices.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";
import {testSeed} from "../helpers/testSeed.js";
import {requireVulkan} from "../helpers/vulkanDevice.js";
import type {GpuSetting} from "../../src/core/common/api/types.js";

const modelPath = requireTestModel();
const vulkan = modelPath == null ? null : await requireVulkan();
const words = ["cat", "dog", "park", "ball", "tree", "sun", "happy", "red", "big", "girl", "boy", "bird", "house", "cake", "friend", "rain"];

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

/**
 * B's greedy reply and first-token probabilities after A (a secret; closed or still open) in one
 * process, against B in fresh processes that never saw A, on the same backend: `pairs` random pairs.
 */
async function proveDifferential(gpu: GpuSetting, pairs: number, {parallelFresh, aReadsDocuments = false}: {parallelFresh: number, aReadsDocuments?: boolean}) {
    const seed = testSeed("differential", "CLEANROOM_DIFF_SEED");
    const random = seededRandom(seed);
    const requests = Array.from({length: pairs}, (_, index) => ({
        secret: `secret ${Math.floor(random() * 2 ** 48).toString(16)} ${randomSentence(random, 12)}`,
        keepAAlive: index % 2 === 1,
        b: {systemPrompt: randomSentence(random, 4), prompt: `Once upon a time ${randomSentence(random, 6)}`, maxTokens: 24} satisfies ProbeRequest
    }));

    const fresh: ProbeResult[] = new Array(pairs);
    const queue = [...requests.keys()];
    await Promise.all(Array.from({length: parallelFresh}, async () => {
        for (let index = queue.shift(); index != null; index = queue.shift()) {
            const {b} = requests[index]!;
            fresh[index] = JSON.parse(await runCli([
                "selftest-probe", "--model", modelPath!, "--threads", "1", "--context-size", "512", "--gpu", gpu,
                "--system", b.systemPrompt, "--prompt", b.prompt, "--max-tokens", String(b.maxTokens)
            ])) as ProbeResult;
        }
    }));

    const {core} = await createTestCore(modelPath!, {threads: 1, contextSize: 512}, {}, gpu);
    const mismatches: string[] = [];
    try {
        // The backend asked for is the one that ran (a Vulkan run with every layer on the device).
        expect(core.modelInfo()?.gpu ?? "off").toBe(gpu);
        for (const [index, request] of requests.entries()) {
            const a = core.createConversation({settings: {systemPrompt: "Keep this safe."}});
            await core.sendMessage({conversationId: a.id, text: request.secret, maxTokens: 24, temperature: 0});
            if (aReadsDocuments) {
                // A reads a document given whole, then one so large it is chunked, indexed and retrieved from (#23).
                const document = (name: string, text: string) => ({kind: "bytes" as const, name, bytes: new TextEncoder().encode(text)});
                const small = asLocalTurn(await core.sendMessage({conversationId: a.id, text: "Read this", maxTokens: 8, temperature: 0,
                    attachments: [document("note.txt", `The note says ${request.secret}.`)]}));
                const large = asLocalTurn(await core.sendMessage({conversationId: a.id, text: `What does it say about ${request.secret}?`, maxTokens: 8, temperature: 0,
                    attachments: [document("book.txt", Array.from({length: 120}, () => randomSentence(random, 10)).join("\n") + `\n${request.secret}`)]}));
                expect([small.attachments![0]!.mode, large.attachments![0]!.mode]).toEqual(["whole", "retrieved"]);
            }
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
        await core.dispose();
    }
    expect(mismatches, `seed ${seed}`).toEqual([]);
}

describe.skipIf(modelPath == null)("differential isolation proof", () => {
    const pairs = 20;
    // Fresh processes, two at a time (two cores). 20 fresh processes: about 30 s on a quiet 2-core machine, several times that under load.
    it(`B's greedy reply and first-token probabilities after A are bit-identical to B in a fresh process (CPU, ${pairs} random pairs)`,
        () => proveDifferential("off", pairs, {parallelFresh: 2}), 600_000);
    // A few pairs: each A turn with documents evaluates a long prompt.
    it("B's greedy reply after A read documents (one whole, one chunked and retrieved) is bit-identical to B in a fresh process (CPU, 4 random pairs)",
        () => proveDifferential("off", 4, {parallelFresh: 2, aReadsDocuments: true}), 600_000);
});

describe.skipIf(modelPath == null || vulkan == null)(`differential isolation proof with the KV on the Vulkan device (${vulkan?.device ?? "none"})`, () => {
    // A software Vulkan device is slow and uses every core: two pairs (A closed, A still open), one fresh process at a time.
    const pairs = 2;
    it(`B after A on Vulkan is bit-identical to B in a fresh Vulkan process (${pairs} random pairs)`,
        () => proveDifferential("vulkan", pairs, {parallelFresh: 1}), 600_000);
});

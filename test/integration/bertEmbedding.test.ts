import fs from "node:fs";
import type {LlamaModel} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {DocumentEmbedder} from "../../src/core/node/documents/embedding/DocumentEmbedder.js";
import {cosineOfUnitVectors} from "../../src/core/node/documents/chunkVectors.js";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {sequenceOptions} from "../../src/core/node/engine/sequenceOptions.js";
import {writeSyntheticBert} from "../helpers/syntheticBert.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const chatModelPath = requireTestModel();

/**
 * A BERT embedding model (an encoder: llama.cpp gives its contexts no KV memory) in node-llama-cpp,
 * and the scrub of its contexts. The model is the synthetic one the test writes (no real BERT GGUF
 * can be downloaded here), whose synonyms share a direction.
 */
describe("a BERT embedding model (synthetic, written by the test; real llama.cpp)", () => {
    const bertPath = writeSyntheticBert();
    let embedder: DocumentEmbedder;

    beforeAll(async () => {
        embedder = await DocumentEmbedder.load(await loadLlama(), bertPath, {threads: 1, scratchParent: tempDir("bert-scratch")});
    });
    afterAll(async () => {
        await embedder?.dispose();
    });

    it("loads and embeds: deterministic vectors, synonyms at cosine 1, unrelated words at 0", async () => {
        const texts = ["My car broke down on the road.", "The automobile is parked outside.", "We swam in the ocean.", "The car and the sea."];
        const first = await embedder.embed(texts);
        const again = await embedder.embed(texts);
        expect(first.vectors.map((vector) => [...vector]), "the same vectors from a new context").toEqual(again.vectors.map((vector) => [...vector]));
        const [car, automobile, ocean, both] = first.vectors;
        expect(car!.length).toBe(16);
        expect(cosineOfUnitVectors(car!, automobile!)).toBeCloseTo(1, 5);
        expect(cosineOfUnitVectors(car!, ocean!)).toBeCloseTo(0, 5);
        expect(cosineOfUnitVectors(car!, both!)).toBeCloseTo(Math.SQRT1_2, 4);
        expect(fs.statSync(bertPath).size, "a tiny file").toBeLessThan(200_000);
    });

    it("each embedding context ends with a verified scrub that proves there was no KV memory to zero: its state read back held nothing", async () => {
        const {scrub} = await embedder.embed(["The invoice was paid in cash."]);
        expect(scrub).toMatchObject({verified: true, failure: null, method: "no-kv-memory", kvCells: 0, layers: 0, bytesZeroed: 0, nonZeroBytes: 0});
        expect(scrub.contextId).toMatch(/^embed-[0-9a-f]{12}$/);
    });
});

describe.skipIf(chatModelPath == null)("the scrub of a model without KV memory fails closed on any state it does not expect", () => {
    it("learned on BERT (memory: none, proved on a throwaway context), it refuses a context that does hold KV bytes: unverified, never passed as empty", async () => {
        const llama = await loadLlama();
        const scratch = PrivateScratchDir.create(tempDir("bert-closed"));
        const models: LlamaModel[] = [];
        try {
            const bert = await llama.loadModel({modelPath: writeSyntheticBert(), gpuLayers: 0});
            models.push(bert);
            const scrubber = await KvScrubber.learn(bert, {contextSize: 128, threads: 1, sequences: 1, batchSize: 128}, scratch);
            expect(scrubber.stateCoverage).toEqual({memory: "none", complete: true, problem: null});
            expect([scrubber.kvCells, scrubber.kvBytes]).toEqual([0, 0]);

            // A causal model's context (a KV cache), fed a token, handed to that scrub.
            const chat = await llama.loadModel({modelPath: chatModelPath!, gpuLayers: 0});
            models.push(chat);
            const context = await chat.createContext({contextSize: 128, threads: 1, sequences: 1});
            const sequence = context.getSequence(sequenceOptions);
            await sequence.evaluateWithoutGeneratingNewTokens(chat.tokenize("Once upon a time"));
            const result = await scrubber.zeroAndVerify(sequence);
            await context.dispose();
            expect(result.verified).toBe(false);
            expect(result.method).toBeUndefined();
            expect(result.failure).toMatch(/bytes after the last layer/);
        } finally {
            for (const model of models.reverse())
                await model.dispose();
            scratch.dispose();
        }
    });
});

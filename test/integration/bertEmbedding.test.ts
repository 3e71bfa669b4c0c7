import fs from "node:fs";
import path from "node:path";
import type {LlamaModel} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import type {Core} from "../../src/core/node/Core.js";
import {vectorFromBlob} from "../../src/core/node/documents/chunkVectors.js";
import {settingKeys} from "../../src/core/node/settings/settingKeys.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {longText} from "../helpers/documentFixtures.js";
import {DocumentEmbedder} from "../../src/core/node/documents/embedding/DocumentEmbedder.js";
import {cosineOfUnitVectors} from "../../src/core/node/documents/chunkVectors.js";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {sequenceOptions} from "../../src/core/node/engine/sequenceOptions.js";
import {writeSyntheticBert} from "../helpers/syntheticBert.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

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

describe.skipIf(chatModelPath == null)("document turns with the BERT model chosen for embeddings (real core, real store, stories260K chatting)", () => {
    let core: Core;
    const bertPath = writeSyntheticBert();
    const documents = tempDir("bert-documents");
    const attach = (name: string, text: string) => {
        const file = path.join(documents, name);
        fs.writeFileSync(file, text);
        return [{kind: "path" as const, path: file}];
    };
    const vectorRows = (conversationId: string) => servicesOf(core).database
        .prepare("SELECT chunk_id AS chunkId, model, vector FROM attachment_chunk_vectors WHERE conversation_id = ? ORDER BY chunk_id").all(conversationId) as
        Array<{chunkId: number, model: string, vector: Buffer}>;
    const chunkCount = (conversationId: string) => (servicesOf(core).database.prepare(`SELECT count(*) AS count FROM attachment_chunks c
        JOIN attachments a ON a.id = c.attachment_id WHERE c.conversation_id = ? AND a.mode = 'retrieved'`).get(conversationId) as {count: number}).count;
    const covers = (passage: {startLine: number, endLine: number} | undefined, line: number) => passage != null && passage.startLine <= line && line <= passage.endLine;
    const chooseBert = () => servicesOf(core).settings.set(settingKeys.documents.embeddingModelPath, bertPath);

    beforeAll(async () => {
        ({core} = await createTestCore(chatModelPath!));
    });
    afterAll(async () => {
        await core?.dispose();
    });

    it("a question sharing no word with the document gets the passage that means what it asks first; BM25 alone gives the document's order", async () => {
        chooseBert();
        const question = "Where is my automobile?";
        const brought = asLocalTurn(await core.startConversation({title: "Meaning"}, {text: "Read this", maxTokens: 4, temperature: 0,
            attachments: attach("notes.txt", longText(40, "The sedan was left by the old mill.", 30, 7))}));
        expect(brought.attachments![0]!.mode).toBe("retrieved");
        const turn = asLocalTurn(await core.sendMessage({conversationId: brought.conversationId, text: question, maxTokens: 4, temperature: 0}));
        expect(covers(turn.retrieved![0], 30), `the sedan's passage first, got lines ${turn.retrieved![0]?.startLine}-${turn.retrieved![0]?.endLine}`).toBe(true);
        const byWordsAlone = servicesOf(core).attachments.retrieve(turn.conversationId, question);
        expect(covers(byWordsAlone[0], 30), "BM25 alone does not put it first (else this proves nothing)").toBe(false);

        // Every chunk's vector is a BLOB in the conversation's rows; only the sedan's chunk means anything to this model.
        const rows = vectorRows(turn.conversationId);
        expect(rows.length).toBe(chunkCount(turn.conversationId));
        expect(rows.every((row) => row.vector.length === 16 * 4)).toBe(true);
        expect(rows.filter((row) => vectorFromBlob(row.vector).some((value) => value !== 0)).length).toBe(1);
    });

    it("the embedding context's scrub is in the conversation's isolation report: verified, no KV memory to zero, its state read back empty", async () => {
        const [conversation] = core.listConversations().filter((summary) => summary.title === "Meaning");
        const report = core.isolationReport(conversation!.id);
        const embeddingScrubs = report.events.filter(isAuditEventOf("scrub.verified", "scrub.failed")).filter((event) => event.data.purpose === "embedding");
        // One embedding context a turn (the document and "Read this", then the question), each its own.
        expect(embeddingScrubs.map((event) => [event.kind, event.data.method, event.data.kvCells, event.data.nonZeroBytes]))
            .toEqual([["scrub.verified", "no-kv-memory", 0, 0], ["scrub.verified", "no-kv-memory", 0, 0]]);
        expect(new Set(embeddingScrubs.map((event) => event.data.contextId)).size).toBe(2);
        expect(report.scrubs.failed).toBe(0);
    });

    it("a document brought before the model was chosen gets its vectors at the conversation's next retrieval (backfill, recorded), and is then retrieved by meaning", async () => {
        servicesOf(core).settings.delete(settingKeys.documents.embeddingModelPath);
        const first = asLocalTurn(await core.startConversation({title: "Backfill"}, {text: "Read this", maxTokens: 4, temperature: 0,
            attachments: attach("visit.txt", longText(40, "The physician arrived at noon.", 12, 8))}));
        const conversationId = first.conversationId;
        expect(vectorRows(conversationId)).toEqual([]);

        chooseBert();
        const next = asLocalTurn(await core.sendMessage({conversationId, text: "Doctor arrival time?", maxTokens: 4, temperature: 0}));
        expect(vectorRows(conversationId).length).toBe(chunkCount(conversationId));
        expect(covers(next.retrieved![0], 12), `the physician's passage first, got lines ${next.retrieved![0]?.startLine}-${next.retrieved![0]?.endLine}`).toBe(true);
        const recorded = () => core.isolationReport(conversationId).events.filter(isAuditEventOf("turn.documents")).map((event) => event.data.backfilledVectors);
        expect(recorded()).toEqual([undefined, chunkCount(conversationId)]);

        // Once is enough: the next turn finds every chunk embedded.
        asLocalTurn(await core.sendMessage({conversationId, text: "And the doctor?", maxTokens: 4, temperature: 0}));
        expect(recorded()).toEqual([undefined, chunkCount(conversationId), undefined]);
    });
});

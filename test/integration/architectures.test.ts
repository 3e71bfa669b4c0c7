import {isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import path from "node:path";
import type {LlamaContextOptions, LlamaContextSequence} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import type {Core} from "../../src/core/node/Core.js";
import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {PrivateScratchDir} from "../../src/core/node/engine/PrivateScratchDir.js";
import {readSequenceState} from "../../src/core/node/engine/SequenceStateFile.js";
import {sequenceOptions} from "../../src/core/node/engine/sequenceOptions.js";
import {stateSectionsOf} from "../../src/core/node/engine/sequenceStateCoverage.js";
import {makeModel, type MakeModelOptions, type ModelArchitectureName} from "../../tools/gguf/makeModel.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

const tokenizerFrom = requireTestModel();
const models = new Map<string, string>();

/** A generated model of `architecture` (written once per run, to a temp folder). */
function modelOf(architecture: ModelArchitectureName, options: Omit<MakeModelOptions, "tokenizerFrom"> = {}) {
    const key = `${architecture} ${JSON.stringify(options)}`;
    let modelPath = models.get(key);
    if (modelPath == null) {
        modelPath = path.join(tempDir(`arch-${architecture}`), `${architecture}.gguf`);
        makeModel(modelPath, architecture, {tokenizerFrom: tokenizerFrom!, ...options});
        models.set(key, modelPath);
    }
    return modelPath;
}

async function twoTurns(core: Core) {
    const conversation = core.createConversation({title: "two turns"});
    for (const text of ["Once upon a time", "And then the little cat"])
        asLocalTurn(await core.sendMessage({conversationId: conversation.id, text, maxTokens: 6, temperature: 0}));
    return conversation.id;
}

const architectures = [
    ["llama", "kv", ["kv"]],
    ["qwen3", "kv", ["kv"]],
    ["gemma3", "swa", ["kv", "kv-swa"]],
    ["gpt-oss", "swa", ["kv", "kv-swa"]],
    ["lfm2", "hybrid", ["kv", "recurrent"]],
    ["mamba", "recurrent", ["recurrent"]]
] as const;

describe.skipIf(tokenizerFrom == null)("every architecture: a scrub is verified only when it zeroes and reads back all of a conversation's state", () => {
    it.each(architectures)("%s (%s): every part of a conversation's state (%j) holds its data, then reads back all zeros after the scrub", async (architecture, memory, sections) => {
        const llama = await loadLlama();
        const model = await llama.loadModel({modelPath: modelOf(architecture)});
        const scratch = PrivateScratchDir.create(tempDir("arch-scratch"));
        const options: LlamaContextOptions = {contextSize: 256, threads: 1, sequences: 1, batchSize: 256, swaFullCache: true};
        try {
            expect(stateSectionsOf(model.fileInsights)).toEqual(sections);
            const scrubber = await KvScrubber.learn(model, options, scratch);
            expect(scrubber.stateCoverage).toEqual({memory, complete: true, problem: null});
            expect(scrubber.stateLayout?.sections.map((section) => section.kind)).toEqual(sections);

            const context = await model.createContext(options);
            const sequence = context.getSequence(sequenceOptions);
            await sequence.evaluateWithoutGeneratingNewTokens(model.tokenize("The vault code is 4417 and the cat is called Biscuit. ".repeat(4)));
            const saved = scratch.newFilePath("before");
            await sequence.saveStateToFile(saved);
            // Before: every part (each KV cache, the recurrent state) holds the conversation, so the check below can fail.
            const before = await readSequenceState(saved, [...sections]);
            scratch.removeFile(saved);
            for (const section of before.sections)
                expect(section.kind === "recurrent" ? section.recurrent.nonZeroPayloadBytes : section.kv.nonZeroPayloadBytes).toBeGreaterThan(0);

            const result = await scrubber.zeroAndVerify(sequence);
            expect(result).toMatchObject({verified: true, nonZeroBytes: 0, failure: null, bytesChecked: scrubber.kvBytes, bytesZeroed: scrubber.kvBytes});
            await context.dispose();
        } finally {
            await model.dispose();
            scratch.dispose();
        }
    });

    it.each(architectures)("%s (%s): two turns in the app, the session's scrub verified, no checkpoint kept", async (architecture, memory, sections) => {
        const {core} = await createTestCore(modelOf(architecture));
        try {
            expect(core.modelInfo()).toMatchObject({architecture, sequenceMemory: memory, stateCovered: true, stateCoverageProblem: null});
            expect(core.auditEvents({kinds: ["model.loaded"]})[0]!.data).toMatchObject({sequenceMemory: memory, stateCovered: true, stateParts: sections.join(" + ")});
            const conversationId = await twoTurns(core);
            // Without the whole-clear before a turn, lfm2 and mamba kept a checkpoint here, and this scrub was unverified.
            expect(await core.closeConversation(conversationId)).toMatchObject({verified: true, nonZeroBytes: 0});
        } finally {
            await core.dispose();
        }
    });

    it("a state the parser does not read as the architecture says (gemma3 whose window is its whole context: node-llama-cpp sees no sliding window, llama.cpp keeps two KV caches) loads, and every scrub is unverified with the reason", async () => {
        const {core} = await createTestCore(modelOf("gemma3", {contextLength: 2048, slidingWindow: 4096}));
        const events: AuditEvent[] = [];
        const listening = core.onAuditEvent((event) => events.push(event));
        const reason = "gemma3 keeps a KV cache, and its state saved after one token is not kv";
        try {
            const info = core.modelInfo()!;
            expect(info).toMatchObject({architecture: "gemma3", sequenceMemory: "kv", stateCovered: false});
            expect(info.stateCoverageProblem).toContain(reason);
            expect(info.stateCoverageProblem).toMatch(/bytes after the last layer/);

            const conversationId = await twoTurns(core);
            await expect(core.closeConversation(conversationId)).rejects.toMatchObject({code: "SCRUB_UNVERIFIED", message: expect.stringContaining(reason)});
            expect(core.isolationReport(conversationId)).toMatchObject({scrubs: {verified: 0, failed: 1}, lastScrub: {verified: false}});
            const failed = events.filter(isAuditEventOf("scrub.failed")).filter((event) => event.conversationId === conversationId);
            expect(failed).toHaveLength(1);
            expect(failed[0]!.data.failure).toContain(reason);
            expect(events.filter((event) => event.kind === "scrub.verified")).toHaveLength(0);
        } finally {
            listening.dispose();
            await core.dispose().catch(() => undefined); // scrubs at close are unverified too
        }
    });

    describe("node-llama-cpp's checkpoints (copies of a hybrid or recurrent state in RAM, which no scrub zeroes)", () => {
        let core: Core;
        beforeAll(async () => {
            core = (await createTestCore(modelOf("lfm2"))).core;
        });
        afterAll(async () => {
            await core.dispose().catch(() => undefined);
        });

        it("a checkpoint that exists when the session ends makes its scrub unverified, saying so", async () => {
            const conversationId = await twoTurns(core);
            // Reaches into the context the way a node-llama-cpp code path would: a checkpoint of the conversation's state.
            const context = servicesOf(core).engine.pool!.peek(conversationId)!;
            const sequence = (context as unknown as {_sequence: LlamaContextSequence})._sequence;
            await sequence.takeCheckpoint();
            expect(sequence.checkpointsMemoryUsage).toBeGreaterThan(0);

            const error = await core.closeConversation(conversationId).catch((caught: unknown) => caught);
            expect(error).toMatchObject({code: "SCRUB_UNVERIFIED"});
            expect((error as Error).message).toMatch(/node-llama-cpp kept \d+ bytes of checkpoints of this sequence/);
        });
    });
});

import path from "node:path";
import type {LlamaContextSequence} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import type {Core} from "../../src/core/node/Core.js";
import {makeModel, type ModelArchitectureName} from "../../tools/gguf/makeModel.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

const tokenizerFrom = requireTestModel();
const models = new Map<ModelArchitectureName, string>();

/** A generated model of `architecture` (written once per run, to a temp folder). */
function modelOf(architecture: ModelArchitectureName) {
    let modelPath = models.get(architecture);
    if (modelPath == null) {
        modelPath = path.join(tempDir(`arch-${architecture}`), `${architecture}.gguf`);
        makeModel(modelPath, architecture, {tokenizerFrom: tokenizerFrom!});
        models.set(architecture, modelPath);
    }
    return modelPath;
}

async function twoTurns(core: Core) {
    const conversation = core.createConversation({title: "two turns"});
    for (const text of ["Once upon a time", "And then the little cat"])
        asLocalTurn(await core.sendMessage({conversationId: conversation.id, text, maxTokens: 6, temperature: 0}));
    return conversation.id;
}

describe.skipIf(tokenizerFrom == null)("every architecture: a scrub is verified only when it zeroes and reads back all of a conversation's state", () => {
    it.each([["llama"], ["qwen3"]] as const)("%s (one KV cache): the scrub covers the whole state and is verified", async (architecture) => {
        const {core} = await createTestCore(modelOf(architecture));
        try {
            expect(core.modelInfo()).toMatchObject({architecture, sequenceMemory: "kv", stateCovered: true, stateCoverageProblem: null});
            const conversationId = await twoTurns(core);
            expect(await core.closeConversation(conversationId)).toMatchObject({verified: true, nonZeroBytes: 0});
        } finally {
            await core.close();
        }
    });

    it.each([
        ["gemma3", "swa", "gemma3 uses sliding-window attention"],
        ["gpt-oss", "swa", "gpt-oss uses sliding-window attention"],
        ["lfm2", "hybrid", "lfm2 is a hybrid model"],
        ["mamba", "recurrent", "mamba is a recurrent model"]
    ] as const)("%s (%s): the model loads, its state is shown as not covered, and every scrub is unverified with the reason", async (architecture, memory, reason) => {
        const {core} = await createTestCore(modelOf(architecture));
        const events: AuditEvent[] = [];
        const listening = core.onAuditEvent((event) => events.push(event));
        try {
            const info = core.modelInfo()!;
            expect(info).toMatchObject({architecture, sequenceMemory: memory, stateCovered: false});
            expect(info.stateCoverageProblem).toContain(reason);

            // A conversation runs; its end is a security fault that names the reason, never "verified".
            const conversationId = await twoTurns(core);
            await expect(core.closeConversation(conversationId)).rejects.toMatchObject({code: "SCRUB_UNVERIFIED", message: expect.stringContaining(reason)});
            expect(core.isolationReport(conversationId)).toMatchObject({scrubs: {verified: 0, failed: 1}, lastScrub: {verified: false}});
            const failed = events.filter((event) => event.kind === "scrub.failed" && event.conversationId === conversationId);
            expect(failed).toHaveLength(1);
            expect(failed[0]!.data.failure).toContain(reason);
            // No copy of the state was left behind by node-llama-cpp: two turns took no checkpoint.
            expect(failed[0]!.data.failure).not.toContain("checkpoints");
            expect(events.filter((event) => event.kind === "scrub.verified")).toHaveLength(0);
        } finally {
            listening.dispose();
            await core.close().catch(() => undefined); // scrubs at close are unverified too
        }
    });

    describe("node-llama-cpp's checkpoints (copies of a sliding-window, hybrid or recurrent state in RAM)", () => {
        let core: Core;
        beforeAll(async () => {
            core = (await createTestCore(modelOf("lfm2"))).core;
        });
        afterAll(async () => {
            await core.close().catch(() => undefined);
        });

        it("a checkpoint that exists when the session ends is reported: the scrub is unverified and says so", async () => {
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

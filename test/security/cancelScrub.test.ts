import {type AuditKind, isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {envelopeFile} from "../../src/core/node/database/keys/keyEnvelope.js";
import type {AuditEvent, ConversationId, LocalTurnResult, TurnOutcome} from "../../src/core/common/types.js";
import type {Core} from "../../src/core/node/Core.js";
import {createTestCore} from "../helpers/tempCore.js";
import {testBuildScript} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";
import type {FreshTurnRequest, FreshTurnResult} from "./helpers/freshTurnWorker.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();
const contextSize = 1024;
/** Small prefill steps, so that a long prompt takes dozens of them and a cancel can land in the middle. */
const prefillChunkTokens = 16;
const maxTokens = 40;
/** Compiled in the test build (testBuild.ts): no tsx in the worker nor in node-llama-cpp's binding check forked from it. */
const workerPath = await testBuildScript("freshTurnWorker");

/**
 * TensorRT-LLM's CVE-2026-24205: a request cancelled in the middle of a chunked prefill left
 * half-filled KV blocks that later requests received. Here a turn is cancelled during its
 * prefill, during generation, and while its context is being scrubbed; each time the context
 * must be scrubbed and verified (0 non-zero bytes read back) before it is freed, no other
 * conversation ever gets it, and the conversation's next turn is rebuilt from the stored history
 * only: every prompt token evaluated again, none reused, and the same reply as a fresh process
 * gives for the same stored history at temperature 0. Real model, real SQLite.
 */
describe.skipIf(modelPath == null)("a cancelled turn leaves no half-evaluated state behind", () => {
    let core: Core;
    let database: string;
    let dir: string;
    let longPrompt: string;
    let scrubbedCancels = 0;

    const events = (conversationId?: ConversationId) => core.auditEvents({conversationId, limit: 10_000});
    const contextIdOf = (event: AuditEvent) => "contextId" in event.data ? event.data.contextId : undefined;
    const find = <Kind extends AuditKind>(list: AuditEvent[], kind: Kind, contextId: string) => list.filter(isAuditEventOf(kind)).find((event) => contextIdOf(event) === contextId);

    /** The cancelled turn's context was scrubbed, verified and freed, and only its own conversation ever had it. */
    function expectScrubbedAndFreed(conversationId: ConversationId, turn: LocalTurnResult, reason = "abort") {
        const contextId = turn.isolation!.contextId;
        const own = events(conversationId);
        const started = find(own, "scrub.started", contextId);
        const verified = find(own, "scrub.verified", contextId);
        const disposed = find(own, "context.disposed", contextId);
        expect(started?.data.reason).toBe(reason);
        expect(verified?.data).toMatchObject({reason, nonZeroBytes: 0, kvCells: turn.isolation!.kvCells, cellsReadBack: turn.isolation!.kvCells,
            bytesChecked: turn.isolation!.kvBytes});
        expect(disposed).toBeDefined();
        expect(started!.id < verified!.id && verified!.id < disposed!.id).toBe(true);
        expect(find(own, "scrub.failed", contextId)).toBeUndefined();
        expect(core.lastScrubReport(conversationId)).toMatchObject({contextId, verified: true, nonZeroBytes: 0, reason});
        expect(servicesOf(core).engine.pool!.peek(conversationId)?.id).not.toBe(contextId);
        // No event of any other conversation names this context.
        expect(events().filter((event) => contextIdOf(event) === contextId && event.conversationId !== conversationId)).toEqual([]);
        if (reason === "abort")
            scrubbedCancels++;
        return verified!;
    }

    /** A copy of the database as it is now: the stored history a fresh process starts from. */
    function snapshot(label: string) {
        const copy = path.join(dir, `${label}.db`);
        servicesOf(core).database.exec(`VACUUM INTO '${copy}'`); // encrypted under the same key: its key file goes with it
        fs.copyFileSync(envelopeFile(database), envelopeFile(copy));
        return copy;
    }

    function freshProcessTurn(request: Omit<FreshTurnRequest, "modelPath" | "maxTokens" | "contextSize" | "prefillChunkTokens">): Promise<FreshTurnResult> {
        const full: FreshTurnRequest = {...request, modelPath: modelPath!, maxTokens, contextSize, prefillChunkTokens};
        return new Promise((resolve, reject) => {
            const child = spawn(process.execPath, [workerPath, JSON.stringify(full)], {stdio: ["ignore", "pipe", "pipe"]});
            let stdout = "";
            let stderr = "";
            child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk);
            child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk);
            child.once("error", reject);
            child.once("exit", (code) => code === 0 ? resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as FreshTurnResult)
                : reject(new Error(`fresh turn exited with ${code}: ${stderr}`)));
        });
    }

    /** The next turn evaluates its whole prompt in a new context, and says what a fresh process says from the same stored history. */
    async function expectRebuiltFromHistory(conversationId: ConversationId, text: string, cancelledContextId: string) {
        const stored = snapshot(`before-${conversationId}`);
        const next = asLocalTurn(await core.sendMessage({conversationId, text, maxTokens, temperature: 0}));
        expect(next.status).toBe("complete");
        expect(next.isolation!.contextId).not.toBe(cancelledContextId);
        expect(next.tokens.reused).toBe(0);
        expect(next.tokens.evaluated).toBe(next.tokens.prompt);
        expect(find(events(conversationId), "context.created", next.isolation!.contextId)).toBeDefined();

        const fresh = await freshProcessTurn({database: stored, conversationId, text});
        expect(fresh).toEqual({reply: next.reply, tokens: next.tokens, contextCreated: true});
        return next;
    }

    beforeAll(async () => {
        ({core, database, dir} = await createTestCore(modelPath!, {contextSize, prefillChunkTokens}));
        void database;
        const sentence = "Once upon a time, there was a little girl named Lily who loved to play in the big green park with her dog. ";
        longPrompt = "";
        while (core.countTokens(longPrompt) < 600)
            longPrompt += sentence;
    });

    afterAll(async () => {
        await core?.dispose();
        console.info(`[cancelled turns] ${scrubbedCancels} cancellations scrubbed and verified (0 non-zero bytes read back) before their context was freed; ` +
            "each next turn rebuilt from the stored history (evaluated = prompt tokens, 0 reused) and equal to a fresh process's reply");
    });

    it("cancelled during the prefill: the half-filled context is scrubbed before anyone else runs; the next turn starts over from the history", async () => {
        const a = core.createConversation({title: "prefill"});
        const controller = new AbortController();
        const steps: Array<[number, number]> = [];
        const cancelled = asLocalTurn(await core.sendMessage({conversationId: a.id, text: longPrompt, maxTokens, temperature: 0}, {
            signal: controller.signal,
            onPrefill: (inContext, promptTokens) => {
                steps.push([inContext, promptTokens]);
                controller.abort(); // as soon as evaluation has started
            }
        }));
        // The prefill really was under way, and was cut: part of the prompt in KV, nothing generated.
        expect(steps).toHaveLength(1);
        expect(steps[0]![0]).toBe(prefillChunkTokens);
        expect(steps[0]![1]).toBeGreaterThan(prefillChunkTokens * 10);
        expect(cancelled).toMatchObject({status: "interrupted", finishReason: "aborted", reply: ""});
        expect(cancelled.tokens).toMatchObject({evaluated: prefillChunkTokens, generated: 0});
        expect(cancelled.tokens.prompt).toBe(steps[0]![1]);
        const verified = expectScrubbedAndFreed(a.id, cancelled);

        // Another conversation asks next: a context of its own, created after the scrub was verified.
        const b = core.createConversation({title: "other"});
        const other = asLocalTurn(await core.sendMessage({conversationId: b.id, text: "Tell me about a cat.", maxTokens: 16, temperature: 0}));
        expect(other.isolation!.contextId).not.toBe(cancelled.isolation!.contextId);
        expect(find(events(b.id), "context.created", other.isolation!.contextId)!.id).toBeGreaterThan(verified.id);
        expect(other.tokens.reused).toBe(0);

        await expectRebuiltFromHistory(a.id, "What did Lily do next?", cancelled.isolation!.contextId);
    });

    it("cancelled during generation: the context with the cut-off reply is scrubbed; the next turn is rebuilt from what was stored", async () => {
        const c = core.createConversation({title: "generation"});
        const controller = new AbortController();
        let pieces = 0;
        const cancelled = asLocalTurn(await core.sendMessage({conversationId: c.id, text: "Once upon a time, a little fox", maxTokens, temperature: 0}, {
            signal: controller.signal,
            onText: () => {
                if (++pieces === 4)
                    controller.abort();
            }
        }));
        expect(cancelled).toMatchObject({status: "interrupted", finishReason: "aborted"});
        expect(cancelled.tokens.generated).toBeGreaterThan(0);
        expect(cancelled.reply.length).toBeGreaterThan(0);
        expect(core.getConversation(c.id).messages.at(-1)).toMatchObject({status: "interrupted", content: cancelled.reply});
        expectScrubbedAndFreed(c.id, cancelled);

        const next = await expectRebuiltFromHistory(c.id, "And then?", cancelled.isolation!.contextId);
        // The interrupted reply is part of the stored history, so of the rebuilt prompt.
        expect(next.tokens.prompt).toBeGreaterThan(core.countTokens(cancelled.reply));
    });

    it("cancelled while its context is being scrubbed: the scrub still verifies, and the turn gets a fresh context, scrubbed in its turn", async () => {
        const d = core.createConversation({title: "during a scrub"});
        const first = asLocalTurn(await core.sendMessage({conversationId: d.id, text: "Once upon a time, a big bear", maxTokens: 16, temperature: 0}));
        const liveContextId = first.isolation!.contextId;

        // While the close scrubs d's context, a new turn of d starts and is cancelled at its first prefill step.
        const controller = new AbortController();
        let during: Promise<TurnOutcome> | null = null;
        let scrubRunning = false;
        const stop = core.onAuditEvent((event) => {
            if (event.conversationId !== d.id || contextIdOf(event) !== liveContextId)
                return;
            if (event.kind === "scrub.started") {
                scrubRunning = true;
                during = core.sendMessage({conversationId: d.id, text: longPrompt, maxTokens, temperature: 0}, {
                    signal: controller.signal,
                    onPrefill: () => controller.abort()
                });
                controller.abort(); // a second cancel while the scrub runs changes nothing
            } else if (event.kind === "scrub.verified")
                scrubRunning = false;
        });
        const closed = await core.closeConversation(d.id);
        stop.dispose();
        expect(scrubRunning).toBe(false);
        expect(closed).toMatchObject({contextId: liveContextId, verified: true, nonZeroBytes: 0, reason: "close"});
        expect(during).not.toBeNull();

        const cancelled = asLocalTurn(await during!);
        expect(cancelled).toMatchObject({status: "interrupted", finishReason: "aborted", reply: ""});
        expect(cancelled.isolation!.contextId).not.toBe(liveContextId);
        expect(cancelled.tokens.evaluated).toBe(0); // cancelled before its first step
        expectScrubbedAndFreed(d.id, cancelled);
        expect(find(events(d.id), "scrub.verified", liveContextId)!.data).toMatchObject({nonZeroBytes: 0, reason: "close"});

        // A cancel that arrives while a cancelled turn's own scrub runs: the scrub verifies all the same.
        const again = new AbortController();
        let pieces = 0;
        const stopAgain = core.onAuditEvent((event) => {
            if (event.conversationId === d.id && event.kind === "scrub.started" && event.data.reason === "abort")
                again.abort(new Error("cancelled twice"));
        });
        const twice = asLocalTurn(await core.sendMessage({conversationId: d.id, text: "Once upon a time, a little fox", maxTokens, temperature: 0}, {
            signal: again.signal,
            onText: () => {
                if (++pieces === 2)
                    again.abort();
            }
        }));
        stopAgain.dispose();
        expect(twice.status).toBe("interrupted");
        expectScrubbedAndFreed(d.id, twice);

        await expectRebuiltFromHistory(d.id, "What happened to the bear?", twice.isolation!.contextId);
    });
});

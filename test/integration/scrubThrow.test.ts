import {type AuditKind, isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import path from "node:path";
import type {LlamaContext, LlamaModel} from "node-llama-cpp";
import {afterEach, describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import type {Core} from "../../src/core/node/Core.js";
import type {CachedKvLayout} from "../../src/core/node/engine/KvLayoutCache.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {forcedScrubThrow, forceScrubThrows} from "../helpers/forceScrubThrow.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {openTestCore} from "../helpers/coreServices.js";

const modelPath = requireTestModel();
/** `--import`ed into the test build's CLI (testBuild.ts): every scrub there throws. */
const forcedThrow = await cliWithPreloads("forceScrubThrow.preload.ts");
const expectedMessage = `could not be verified (the scrub failed: ${forcedScrubThrow})`;
const forcedCreateFailure = "forced by the test: no context can be created";

/** A core whose cached KV layout is `tamper`ed (written by a first load on the same database), as a load on another build might find it. */
async function coreWithCachedLayout(tamper: (entry: CachedKvLayout) => CachedKvLayout): Promise<Core> {
    const database = path.join(tempDir("scrub-throw-cache"), "app.db");
    const open = async () => {
        const core = openTestCore(await loadLlama(), {database, engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}}});
        await core.loadModel(modelPath!);
        return core;
    };
    const setup = await open();
    const settings = servicesOf(setup).settings;
    const [key, entry] = Object.entries(settings.all()).find(([name]) => name.startsWith("kv.layout."))! as [string, CachedKvLayout];
    settings.set(key, tamper(entry));
    await setup.dispose();
    return await open();
}

/** The model's contexts from now on: the first `real` are created (and kept in `created`), later ones fail, as on a machine out of memory. */
function failContextCreationAfter(model: LlamaModel, real: number) {
    const createContext = model.createContext.bind(model);
    const created: LlamaContext[] = [];
    model.createContext = async (options) => {
        if (created.length >= real)
            throw new Error(forcedCreateFailure);
        const context = await createContext(options);
        created.push(context);
        return context;
    };
    return created;
}

describe.skipIf(modelPath == null)("a scrub that throws ends its session unverified: reported as SCRUB_UNVERIFIED, the context freed, nothing else left undone", () => {
    let restore: (() => void) | null = null;
    afterEach(() => {
        restore?.();
        restore = null;
    });

    it("forced throw at quit, one session of two: the other is still scrubbed and verified, both contexts are freed, the model unloads, the fault is recorded and raised", async () => {
        const {core} = await createTestCore(modelPath!);
        const events: AuditEvent[] = [];
        const listening = core.onAuditEvent((event) => events.push(event));
        const conversations = [core.createConversation({title: "first"}), core.createConversation({title: "second"})];
        const contextIds = new Map<string, string>();
        for (const conversation of conversations) {
            const turn = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0}));
            contextIds.set(conversation.id, turn.isolation!.contextId);
        }
        const engine = servicesOf(core).engine;
        const model = engine.model!;
        const forced = forceScrubThrows({times: 1});
        restore = forced.restore;

        const error = await core.dispose().catch((caught: unknown) => caught);
        listening.dispose();

        // Raised as an unverified scrub, with what went wrong.
        expect(error).toMatchObject({code: "SCRUB_UNVERIFIED"});
        expect((error as Error).message).toContain(expectedMessage);
        // Both sessions' scrubs were asked for; both contexts and the model were freed.
        expect(forced.scrubbed).toHaveLength(2);
        expect(forced.scrubbed.map((sequence) => sequence.context.disposed)).toEqual([true, true]);
        expect(model.disposed).toBe(true);
        expect(engine.model).toBeNull();

        const of = <Kind extends AuditKind>(conversationId: string, kind: Kind) => events.filter(isAuditEventOf(kind)).filter((event) => event.conversationId === conversationId);
        const [thrower, other] = conversations.map((conversation) => conversation.id).sort((a, b) => of(b, "scrub.failed").length - of(a, "scrub.failed").length);
        // The one whose scrub threw: recorded and raised as the unverified path records it.
        expect(of(thrower!, "scrub.failed")).toHaveLength(1);
        expect(of(thrower!, "scrub.failed")[0]!.data).toMatchObject({contextId: contextIds.get(thrower!), reason: "shutdown", failure: `the scrub failed: ${forcedScrubThrow}`});
        expect(of(thrower!, "scrub.verified")).toHaveLength(0);
        expect(of(thrower!, "security.fault")).toHaveLength(1);
        expect(of(thrower!, "security.fault")[0]!.data).toMatchObject({contextId: contextIds.get(thrower!), error: {code: "SCRUB_UNVERIFIED"}});
        expect(of(thrower!, "security.fault")[0]!.data.error?.message).toContain(expectedMessage);
        // The other: scrubbed and verified as usual.
        expect(of(other!, "scrub.verified")).toHaveLength(1);
        expect(of(other!, "scrub.verified")[0]!.data).toMatchObject({contextId: contextIds.get(other!), reason: "shutdown", nonZeroBytes: 0});
        expect(of(other!, "scrub.failed")).toHaveLength(0);
        expect(of(other!, "security.fault")).toHaveLength(0);
        // Both ended their session in the audit.
        for (const conversation of conversations)
            expect(of(conversation.id, "context.disposed").map((event) => event.data.contextId)).toEqual([contextIds.get(conversation.id)]);
    });

    it("forced throw when a conversation is closed: SCRUB_UNVERIFIED, the context freed, and the conversation's next turn gets a new context", async () => {
        const {core} = await createTestCore(modelPath!);
        try {
            const conversation = core.createConversation({title: "closing"});
            const first = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0}));
            const forced = forceScrubThrows({times: 1});
            restore = forced.restore;

            await expect(core.closeConversation(conversation.id)).rejects.toMatchObject({code: "SCRUB_UNVERIFIED", message: expect.stringContaining(expectedMessage)});
            expect(forced.scrubbed.map((sequence) => sequence.context.disposed)).toEqual([true]);
            expect(core.isolationReport(conversation.id)).toMatchObject({live: null, scrubs: {verified: 0, failed: 1}, lastScrub: {verified: false}});

            const next = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0}));
            expect(next.isolation!.contextId).not.toBe(first.isolation!.contextId);
            expect(await core.closeConversation(conversation.id)).toMatchObject({contextId: next.isolation!.contextId, verified: true, nonZeroBytes: 0});
        } finally {
            await core.dispose();
        }
    });

    it("forced throw: chat --prompt --json prints the reply, then SCRUB_UNVERIFIED on stderr, and exits 4", async () => {
        const {env, db} = hermeticCliEnv("scrub-throw");
        const run = await runCliCapturing([
            "chat", "--model", modelPath!, "--db", db, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"
        ], {env, ...forcedThrow});
        expect(run.stderr).not.toContain("INTERNAL");
        expect(run.code).toBe(4);
        expect(JSON.parse(run.stdout)).toMatchObject({route: "local", status: "complete", isolation: {scrub: null}});
        const errors = run.stderr.trim().split("\n").map((line) => JSON.parse(line) as {error: {code: string, message: string}});
        expect(errors).toHaveLength(1);
        expect(errors[0]!.error.code).toBe("SCRUB_UNVERIFIED");
        expect(errors[0]!.error.message).toContain(expectedMessage);
    });

    it("a cached layout the scrub contradicts, learned again on no context (none can be created): the session ends unverified and its context is freed", async () => {
        const core = await coreWithCachedLayout((entry) => ({...entry, layout: {...entry.layout, vTransposed: !entry.layout.vTransposed}}));
        try {
            const conversation = core.createConversation({title: "relearn"});
            const created = failContextCreationAfter(servicesOf(core).engine.model!, 1);
            const turn = asLocalTurn(await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0}));
            expect(created).toHaveLength(1);

            const error = await core.closeConversation(conversation.id).catch((caught: unknown) => caught);
            expect(error).toMatchObject({code: "SCRUB_UNVERIFIED"});
            expect((error as Error).message).toContain(`could not be verified (the scrub failed: ${forcedCreateFailure})`);
            expect(created[0]!.disposed).toBe(true);
            const events = core.auditEvents({conversationId: conversation.id, kinds: ["scrub.failed", "security.fault", "context.disposed"]});
            expect(events.map((event) => [event.kind, "contextId" in event.data ? event.data.contextId : null])).toEqual(expect.arrayContaining([
                ["scrub.failed", turn.isolation!.contextId], ["security.fault", turn.isolation!.contextId], ["context.disposed", turn.isolation!.contextId]
            ]));
            expect(events).toHaveLength(3);
        } finally {
            await core.dispose();
        }
    });

    it("a cached cell count a new context refutes, learned again on no context (none can be created): the turn fails and the new context is freed", async () => {
        const core = await coreWithCachedLayout((entry) => ({...entry, kvCells: entry.kvCells - 256}));
        try {
            const conversation = core.createConversation({title: "relearn at open"});
            const created = failContextCreationAfter(servicesOf(core).engine.model!, 1);
            await expect(core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 4, temperature: 0}))
                .rejects.toThrow(forcedCreateFailure);
            expect(created).toHaveLength(1);
            expect(created[0]!.disposed).toBe(true);
            expect(servicesOf(core).engine.pool!.size).toBe(0);
        } finally {
            await core.dispose();
        }
    });
});

import type {AuditKind} from "../../src/core/common/api/auditEvents.js";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import type {ConversationId} from "../../src/core/common/types.js";
import {asLocalTurn, openTestCore, servicesOf} from "../helpers/coreServices.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {decryptedCopy} from "../security/helpers/decryptedCopy.js";
import {MemorySecretVault} from "../../src/core/node/secrets/MemorySecretVault.js";

const modelPath = requireTestModel();
const turn = {maxTokens: 24, temperature: 0} as const;
const words = "the little girl found a red ball in the garden and she ran to show her mother who smiled".split(" ");

/** A stored history of `exchanges` user/assistant pairs of story text. */
function seedHistory(core: Core, conversationId: ConversationId, exchanges: number) {
    const services = servicesOf(core);
    const store = services.store.find(conversationId) != null ? services.store : services.incognito.store;
    for (let index = 0; index < exchanges * 2; index++)
        store.appendMessage(conversationId, {
            role: index % 2 === 0 ? "user" : "assistant", status: "complete",
            content: Array.from({length: 12}, (_, word) => words[(index * 5 + word) % words.length]).join(" ")
        });
}

/** A new conversation with exactly the messages `source` has now: the same prompt, and no snapshot of its own. */
function copyConversation(core: Core, source: ConversationId) {
    const copy = core.createConversation({title: "copy"});
    for (const message of core.getConversation(source).messages)
        servicesOf(core).store.appendMessage(copy.id, {role: message.role, content: message.content, status: "complete"});
    return copy.id;
}

const kinds = <Kind extends AuditKind>(core: Core, conversationId: ConversationId, ...wanted: Kind[]) => core.auditEvents({conversationId, kinds: wanted});
const snapshotRow = (core: Core, conversationId: ConversationId) =>
    servicesOf(core).database.prepare("SELECT sealed, binding_json FROM kv_snapshots WHERE conversation_id = ?").get(conversationId) as {sealed: Buffer, binding_json: string} | undefined;

async function openCore(database: string, engine: Record<string, unknown> = {}, model = modelPath!) {
    const core = openTestCore(await loadLlama(undefined, {processDefault: true}), {database, engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}, ...engine}});
    await core.loadModel(model);
    return core;
}

/**
 * A database whose conversations (one per title; `incognito` ones held in memory) have each had a
 * turn over a seeded history, and a core that was then closed (a quit: each saved its snapshot).
 */
async function talkedAndQuit(titles: string[], incognito: string[] = []) {
    const database = path.join(tempDir("resume"), "test.db");
    const core = await openCore(database);
    const ids = [...titles, ...incognito].map((title) => core.createConversation({title, incognito: incognito.includes(title)}).id);
    for (const id of ids) {
        seedHistory(core, id, 3);
        await core.sendMessage({conversationId: id, text: "What did the girl find?", ...turn});
    }
    await core.dispose();
    return {database, ids};
}

/** A conversation with a seeded history and one turn, on a core whose app settings were changed first, then closed (a quit). */
async function talkedAndQuitWith(change: {resumeSnapshots?: boolean, resumeSnapshotMaxMiB?: number}, {exchanges, contextSize}: {exchanges: number, contextSize: number}) {
    const database = path.join(tempDir("resume-settings"), "test.db");
    const core = await openCore(database, {contextSize});
    const conversationId = core.createConversation({title: "a"}).id;
    try {
        await core.openAppSettings(new MemorySecretVault()).set(change);
        seedHistory(core, conversationId, exchanges);
        await core.sendMessage({conversationId, text: "What did the girl find?", ...turn});
    } finally {
        await core.dispose();
    }
    return {database, conversationId};
}

/** A turn that evaluates its whole prompt: no snapshot was restored. */
async function expectFullEvaluation(core: Core, conversationId: ConversationId) {
    const outcome = asLocalTurn(await core.sendMessage({conversationId, text: "Who smiled?", ...turn}));
    expect(outcome.status).toBe("complete");
    expect(outcome.tokens.evaluated).toBe(outcome.tokens.prompt);
    expect(kinds(core, conversationId, "kv.restored")).toHaveLength(0);
}

describe.skipIf(modelPath == null)("resume snapshots (#25)", () => {
    it("an evicted conversation resumes from its sealed snapshot: far fewer tokens evaluated, the same greedy reply as a full re-evaluation", async () => {
        const {core: probe} = await createTestCore(modelPath!, {contextSize: 1024});
        const contextBytes = servicesOf(probe).engine.pool!.contextBytes;
        await probe.dispose();
        // A context with room for the whole history: a window that drops its oldest exchange shares little with an earlier one.
        const {core} = await createTestCore(modelPath!, {contextSize: 1024, pool: {budgetBytes: Math.floor(contextBytes * 1.5)}});
        try {
            const a = core.createConversation({title: "long"}).id;
            seedHistory(core, a, 6);
            await core.sendMessage({conversationId: a, text: "What did the girl find?", ...turn});
            const b = core.createConversation({title: "other"}).id;
            await core.sendMessage({conversationId: b, text: "Once upon a time", ...turn}); // evicts a

            // Sealed and written after the evicting turn's session end, which waits only for the read.
            await expect.poll(() => kinds(core, a, "kv.saved").map((event) => event.data.reason)).toEqual(["evict"]);
            expect(kinds(core, a, "scrub.verified").map((event) => event.data.reason)).toEqual(["evict"]); // the live KV is still zeroed and verified
            expect(snapshotRow(core, a)).toBeDefined();

            const resumed = asLocalTurn(await core.sendMessage({conversationId: a, text: "And then what happened?", ...turn}));
            const restored = kinds(core, a, "kv.restored");
            expect(restored).toHaveLength(1);
            expect(resumed.tokens.evaluated).toBeLessThan(resumed.tokens.prompt / 4);
            expect(resumed.tokens.reused).toBe(restored[0]!.data.sharedWithPrompt);

            // The same history evaluated from nothing (no snapshot) says exactly the same.
            const copy = copyConversation(core, a);
            await core.closeConversation(a); // keeps a's last reply out of the copy's history
            const { messages } = core.getConversation(copy);
            expect(messages.at(-1)!.content).toBe(resumed.reply);
            servicesOf(core).store.deleteMessage(messages.at(-1)!.id);
            servicesOf(core).store.deleteMessage(messages.at(-2)!.id);
            const fresh = asLocalTurn(await core.sendMessage({conversationId: copy, text: "And then what happened?", ...turn}));
            expect(kinds(core, copy, "kv.restored")).toHaveLength(0);
            expect(fresh.tokens.evaluated).toBe(fresh.tokens.prompt);
            expect(fresh.tokens.prompt).toBe(resumed.tokens.prompt);
            expect(fresh.reply).toBe(resumed.reply);
        } finally {
            await core.dispose();
        }
    });

    it("saves at the idle timeout and at quit, and a new process resumes from the snapshot", async () => {
        const dir = tempDir("resume");
        const database = path.join(dir, "test.db");
        const idle = await openCore(database, {pool: {idleTimeoutMs: 200}});
        let a: ConversationId;
        try {
            a = idle.createConversation({title: "idle"}).id;
            seedHistory(idle, a, 4);
            await idle.sendMessage({conversationId: a, text: "Where was the ball?", ...turn});
            await expect.poll(() => kinds(idle, a, "kv.saved").map((event) => event.data.reason)).toEqual(["idle"]);
            await idle.sendMessage({conversationId: a, text: "Who smiled?", ...turn});
            expect(kinds(idle, a, "kv.restored")).toHaveLength(1);
        } finally {
            await idle.dispose();
        }

        const next = await openCore(database);
        try {
            expect(kinds(next, a, "kv.saved").map((event) => event.data.reason)).toEqual(["idle", "shutdown"]);
            const resumed = asLocalTurn(await next.sendMessage({conversationId: a, text: "What colour was it?", ...turn}));
            expect(kinds(next, a, "kv.restored")).toHaveLength(2);
            expect(resumed.tokens.evaluated).toBeLessThan(resumed.tokens.prompt / 4);
        } finally {
            await next.dispose();
        }
    });

    it("turned off in the settings, a quit saves no snapshot, and the next turn evaluates the history", async () => {
        const {database, conversationId} = await talkedAndQuitWith({resumeSnapshots: false}, {exchanges: 3, contextSize: 512});
        const core = await openCore(database);
        try {
            expect(snapshotRow(core, conversationId)).toBeUndefined();
            expect(kinds(core, conversationId, "kv.save.skipped", "kv.save.failed")).toEqual([]);
            await expectFullEvaluation(core, conversationId);
        } finally {
            await core.dispose();
        }
    });

    it("a state larger than the size cap is not saved, and the audit says so with its size and the cap", async () => {
        // Over the 1 MiB cap: about 1,900 tokens, at 640 bytes of KV state per token with the test model.
        const {database, conversationId} = await talkedAndQuitWith({resumeSnapshotMaxMiB: 1}, {exchanges: 64, contextSize: 2048});
        const core = await openCore(database, {contextSize: 2048});
        try {
            expect(snapshotRow(core, conversationId)).toBeUndefined();
            const skipped = kinds(core, conversationId, "kv.save.skipped").map((event) => event.data);
            expect(skipped).toEqual([expect.objectContaining({reason: "shutdown", maxBytes: 2 ** 20})]);
            expect(skipped[0]!.bytes).toBeGreaterThan(2 ** 20);
        } finally {
            await core.dispose();
        }
    });

    it("refuses a tampered snapshot, or one moved to another conversation, and re-evaluates the history instead", async () => {
        const {database, ids: [a, b]} = await talkedAndQuit(["a", "b"]) as {database: string, ids: [ConversationId, ConversationId]};
        const core = await openCore(database);
        try {
            const db = servicesOf(core).database;
            const sealed = snapshotRow(core, a)!.sealed;
            sealed[Math.floor(sealed.length / 2)]! ^= 1;
            db.prepare("UPDATE kv_snapshots SET sealed = ? WHERE conversation_id = ?").run(sealed, a);
            // b's row given a's snapshot, sealed for a: its associated data names a.
            db.prepare("UPDATE kv_snapshots SET sealed = (SELECT sealed FROM kv_snapshots WHERE conversation_id = ?), nonce = (SELECT nonce FROM kv_snapshots WHERE conversation_id = ?) WHERE conversation_id = ?")
                .run(a, a, b);
            for (const id of [a, b]) {
                await expectFullEvaluation(core, id);
                expect(kinds(core, id, "kv.restore.refused").map((event) => event.data.reason)).toEqual([expect.stringMatching(/does not authenticate/)]);
                expect(snapshotRow(core, id)).toBeUndefined();
            }
        } finally {
            await core.dispose();
        }
    });

    it("removes snapshots made with another model or context size when a model loads, and the turn evaluates the history", async () => {
        const {database, ids: [a]} = await talkedAndQuit(["a"]);
        let core = await openCore(database, {contextSize: 384});
        try {
            expect(core.auditEvents({kinds: ["kv.snapshots.removed"]}).at(-1)?.data.removed).toBe(1);
            expect(snapshotRow(core, a!)).toBeUndefined();
            await expectFullEvaluation(core, a!);
        } finally {
            await core.dispose();
        }

        // Another model file (a copy: another modification time, as a re-download or update has).
        const otherModel = path.join(path.dirname(database), "other.gguf");
        fs.copyFileSync(modelPath!, otherModel);
        fs.utimesSync(otherModel, new Date(2020, 0, 1), new Date(2020, 0, 1));
        core = await openCore(database, {contextSize: 384});
        await core.dispose(); // a shutdown save under the current model
        core = await openCore(database, {contextSize: 384}, otherModel);
        try {
            expect(snapshotRow(core, a!)).toBeUndefined();
            await expectFullEvaluation(core, a!);
        } finally {
            await core.dispose();
        }
    });

    it("deleting the conversation or Delete everything removes its snapshot, its bytes gone from the decrypted pages; incognito never has one", async () => {
        const {database, ids: [a, b]} = await talkedAndQuit(["a", "b"], ["incognito"]) as {database: string, ids: [ConversationId, ConversationId]};
        const core = await openCore(database);
        try {
            const rows = servicesOf(core).database.prepare("SELECT conversation_id FROM kv_snapshots").all() as Array<{conversation_id: string}>;
            expect(rows.map((row) => row.conversation_id).sort()).toEqual([a, b].sort()); // the incognito one never saved
            const pieces = [a, b].map((id) => snapshotRow(core, id)!.sealed.subarray(100, 164));

            await core.deleteConversation(a);
            expect(snapshotRow(core, a)).toBeUndefined();
            let plain = fs.readFileSync(decryptedCopy(database, tempDir("decrypted")));
            expect(plain.indexOf(pieces[0]!)).toBe(-1);
            expect(plain.indexOf(pieces[1]!)).toBeGreaterThan(-1); // the control: b's is still there

            await core.deleteEverything();
            plain = fs.readFileSync(decryptedCopy(database, tempDir("decrypted")));
            expect(plain.indexOf(pieces[1]!)).toBe(-1);
        } finally {
            await core.dispose();
        }
    });
});

import crypto from "node:crypto";
import type {Token} from "node-llama-cpp";
import {afterEach, describe, expect, it, vi} from "vitest";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {stateMagic} from "../../src/core/node/engine/SequenceStateFile.js";
import {KvResume, type KvResumeOptions} from "../../src/core/node/resume/KvResume.js";
import type {KvSnapshotBinding} from "../../src/core/node/resume/sealKvSnapshot.js";
import {rememberSnapshotKey} from "../../src/core/node/database/keys/snapshotKeys.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";

const binding: KvSnapshotBinding = {model: "m 1 2", context: "cells 512", build: "prebuilt cpu"};
const conversationId = "conversation-a";

/** A sequence state as the engine reads it: its header (magic, version, token count, tokens), then `bodyBytes` of KV. */
function sequenceState(tokens: number[], bodyBytes = 1024) {
    const header = Buffer.alloc(12 + tokens.length * 4);
    header.writeUInt32LE(stateMagic, 0);
    header.writeUInt32LE(1, 4);
    header.writeUInt32LE(tokens.length, 8);
    tokens.forEach((token, index) => header.writeUInt32LE(token, 12 + index * 4));
    return Buffer.concat([header, crypto.randomBytes(bodyBytes)]);
}

/** Resume on an in-memory store with a snapshot key and one stored conversation; `gate` holds every pending write until opened. */
function openResume(options: Partial<KvResumeOptions> = {}) {
    const database = openDatabase(":memory:");
    rememberSnapshotKey(database, crypto.randomBytes(32));
    database.prepare("INSERT INTO conversations (id, title, policy, settings_json, created_at, updated_at) VALUES (?, 't', 'local', '{}', 0, 0)").run(conversationId);
    const audit = new AuditLog(database);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const resume = KvResume.create({database, audit, isStored: () => true, yieldBetweenChunks: () => gate, ...options})!;
    const snapshotRows = () => (database.prepare("SELECT COUNT(*) AS n FROM kv_snapshots").get() as {n: number}).n;
    const kinds = () => audit.events({}).map((event) => event.kind).filter((kind) => kind.startsWith("kv."));
    return {resume, audit, openGate: () => open(), snapshotRows, kinds, close: () => database.close()};
}

afterEach(() => {
    vi.useRealTimers();
});

describe("resume snapshots are sealed and written off the session end's path (#25)", () => {
    it("the session end waits only for the read: the snapshot is written after it, and a resume waits for its own", async () => {
        const {resume, openGate, snapshotRows, kinds, close} = openResume();
        const state = sequenceState([1, 2, 3]);
        const original = Buffer.from(state);
        await resume.save(conversationId, "evict", binding, () => Promise.resolve(state));
        expect(snapshotRows()).toBe(0); // the session's end is over; the write is still pending
        let loaded: Buffer | null = null;
        const restoring = resume.restore(conversationId, binding, [1, 2, 3, 4] as Token[], async (given) => void (loaded = Buffer.from(given)));
        openGate();
        await expect(restoring).resolves.toMatchObject({restored: true, tokens: 3});
        expect(kinds()).toEqual(["kv.saved", "kv.restored"]);
        expect(loaded!.equals(original)).toBe(true);
        expect(state.every((byte) => byte === 0)).toBe(true); // the plain state is zeroed once sealed
        close();
    });

    it("closing waits for pending writes up to its bound, then drops them: nothing written, the state zeroed, the drop recorded", async () => {
        vi.useFakeTimers({toFake: ["setTimeout", "clearTimeout"]});
        const {resume, openGate, snapshotRows, kinds, close} = openResume({pendingWritesWaitMs: 5_000});
        const state = sequenceState([1, 2, 3]);
        await resume.save(conversationId, "shutdown", binding, () => Promise.resolve(state));
        let dropped: number | null = null;
        void resume.settle().then((count) => (dropped = count));
        await vi.advanceTimersByTimeAsync(4_999);
        expect(dropped).toBeNull();
        await vi.advanceTimersByTimeAsync(1);
        expect(dropped).toBe(1);
        openGate();
        await resume.written(conversationId);
        expect(snapshotRows()).toBe(0);
        expect(state.every((byte) => byte === 0)).toBe(true);
        expect(kinds()).toEqual(["kv.save.dropped"]);
        // Closed: a session that ends later keeps nothing.
        let read = false;
        await resume.save(conversationId, "shutdown", binding, () => Promise.resolve((read = true, sequenceState([1]))));
        expect(read).toBe(false);
        close();
    });

    it("closing returns as soon as the writes are done, well within its bound", async () => {
        vi.useFakeTimers({toFake: ["setTimeout", "clearTimeout"]});
        const {resume, openGate, snapshotRows, close} = openResume({pendingWritesWaitMs: 5_000});
        await resume.save(conversationId, "idle", binding, () => Promise.resolve(sequenceState([7, 8])));
        openGate();
        await expect(resume.settle()).resolves.toBe(0);
        expect(snapshotRows()).toBe(1);
        close();
    });

    it("a state over the size cap is not saved, and is not even read when its estimate is over it", async () => {
        const {resume, openGate, snapshotRows, audit, close} = openResume({maxBytes: () => 2048});
        openGate();
        let reads = 0;
        const read = (bytes: number) => () => Promise.resolve((reads++, sequenceState([1, 2], bytes)));
        await resume.save(conversationId, "evict", binding, read(1024), 4096);
        expect(reads).toBe(0);
        const tooLarge = sequenceState([1, 2], 4096);
        await resume.save(conversationId, "evict", binding, () => Promise.resolve(tooLarge), 1024);
        expect(tooLarge.every((byte) => byte === 0)).toBe(true);
        await resume.save(conversationId, "evict", binding, read(1024), 1024);
        await resume.written(conversationId);
        expect(reads).toBe(1);
        expect(snapshotRows()).toBe(1);
        expect(audit.events({kinds: ["kv.save.skipped"]}).map((event) => event.data.bytes)).toEqual([4096, tooLarge.length]);
        close();
    });

    it("snapshots turned off: nothing is read nor written", async () => {
        let enabled = false;
        const {resume, openGate, snapshotRows, close} = openResume({enabled: () => enabled});
        openGate();
        let reads = 0;
        await resume.save(conversationId, "evict", binding, () => Promise.resolve((reads++, sequenceState([1, 2]))));
        expect(reads).toBe(0);
        enabled = true;
        await resume.save(conversationId, "evict", binding, () => Promise.resolve((reads++, sequenceState([1, 2]))));
        await resume.written(conversationId);
        expect([reads, snapshotRows()]).toEqual([1, 1]);
        close();
    });
});

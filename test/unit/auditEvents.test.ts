import path from "node:path";
import type Database from "better-sqlite3-multiple-ciphers";
import {afterEach, describe, expect, it} from "vitest";
import type {AuditDataByKind, AuditKind} from "../../src/core/common/api/auditEvents.js";
import type {CloudVerdict} from "../../src/core/common/types.js";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {tempDir} from "../helpers/tempCore.js";

const scrubFacts = {
    contextId: "ctx-1", kvCells: 256, layers: 2, bytesZeroed: 4096, bytesChecked: 4096, nonZeroBytes: 0, cellsReadBack: 256,
    durationMs: 1.5, reason: "idle", layoutSource: "cached"
} as const;
const verdict: CloudVerdict = {kind: "foreign-canary", blocked: true, detail: "a canary of another request", findings: [{kind: "canary", start: 3, end: 19}]};
const overflow = {promptTokens: 300, replyBudget: 64, neededTokens: 364, contextSize: 256, overBy: 108};

/**
 * One example of every kind `AuditLog.record` accepts. The type asks for every kind: a kind added
 * to the union without an example here fails the typecheck, so every kind gets the round trip below.
 */
const examples: AuditDataByKind = {
    "conversation.created": {policy: "local"},
    "conversation.policy": {policy: "cloud-allowed"},
    "conversation.trashed": {},
    "conversation.restored": {},
    "conversation.imported": {},
    "conversation.deleted": {scrubVerified: true, purge: "done"},
    "conversation.idReplaced": {reason: "the stored id broke the conversation id rule", oldIdLength: 5000},
    "turn.local": {
        messageId: 2, contextId: "ctx-1", promptTokens: 40, evaluatedTokens: 40, reusedTokens: 0, generatedTokens: 8,
        finishReason: "maxTokens", kvCells: 256, tokensInContext: 48
    },
    "turn.cloud": {
        messageId: 4, requestId: "req-1", routeReason: "allowed", canariesPlanted: 2, blocked: false, verdict: null,
        promptTokensOurs: 50, promptTokensReported: 52, model: "gpt-test", finishReason: "stop"
    },
    "turn.refused": overflow,
    "turn.documents": {attached: 2, whole: 1, passages: 3},
    "history.dropped": {droppedMessages: 4, droppedTokens: 120, policy: "drop-oldest"},
    "reply.regenerated": {removedMessages: 2, route: "auto"},
    "context.created": {contextId: "ctx-1", kvCells: 256, kvBytes: 65536, threads: 1},
    "context.evicted": {forConversation: "other-conversation"},
    "context.disposed": {contextId: "ctx-1", reason: "evict"},
    "scrub.started": {contextId: "ctx-1", reason: "close"},
    "scrub.verified": scrubFacts,
    "scrub.failed": {...scrubFacts, nonZeroBytes: 12, failure: "read-back was not zero"},
    "security.fault": {
        contextId: "ctx-1", what: "KV scrub could not be verified; the context was discarded",
        error: {code: "SCRUB_UNVERIFIED", message: "The KV scrub could not be verified.", details: {contextId: "ctx-1"}}
    },
    "model.loaded": {architecture: "llama", contextSize: 512, threads: 1, gpu: "cpu", kvLayers: 5, stateCovered: true},
    "device.probed": {device: "gpu 0", driver: "mesa 24", llamaBuild: "b6000", architecture: "llama", passed: true, problem: "", durationMs: 30},
    "threads.tuned": {threads: 2, measurements: [{threads: 1, tokensPerSecond: 900, tokens: 64}, {threads: 2, tokensPerSecond: 1500, tokens: 64, stopped: "time"}], backend: "cpu"},
    "scratch.swept": {staleFoldersRemoved: 1},
    "kv.layout.discarded": {contradiction: "layer 3 moved"},
    "kv.snapshots.removed": {removed: 2, why: "made for another model"},
    "kv.saved": {reason: "idle", tokens: 48, bytes: 70000, readMs: 1, writeMs: 3},
    "kv.save.failed": {reason: "evict", problem: "disk full"},
    "kv.save.skipped": {reason: "evict", bytes: 2_000_000, maxBytes: 1_048_576, why: "the state is larger than the snapshot size cap (resumeSnapshotMaxMiB)"},
    "kv.save.dropped": {snapshots: 1, why: "still being written after 10000 ms at close"},
    "kv.restore.refused": {reason: "it was made with another model", tokens: 48, then: "model a", now: "model b"},
    "kv.restored": {tokens: 48, sharedWithPrompt: 40, promptTokens: 52, durationMs: 3},
    "cloud.settings": {fallback: true, endpointSet: true, model: "gpt-test"},
    "cloud.failed": {requestId: "req-1", code: "CLOUD_UNREACHABLE", message: "The cloud endpoint did not answer."},
    "cloud.blocked": {requestId: "req-1", verdict},
    "cloud.flagged": {requestId: "req-1", verdict: {...verdict, kind: "truncation", blocked: false}},
    "cloud.warning": {requestId: "req-1", warning: "the server counted fewer prompt tokens"},
    "cloud.secrets.blocked": {requestId: "req-1", count: 2, kinds: {"api key": 2}},
    "cloud.secrets.redacted": {requestId: "req-1", count: 1, kinds: {"private key": 1}},
    "cloud.secrets.allowed": {requestId: "req-1", count: 1, kinds: {password: 1}},
    "deletion.pending": {what: "another connection holds a read snapshot", deletions: 1},
    "deletion.purged": {trigger: "timer", deletions: 1, pendingMs: 2500},
    "api.refused": {tenant: "key 1", ...overflow},
    "api.request": {tenant: "key 1", promptTokens: 12, maxTokens: 16, cacheSession: "api-cache-1"},
    "api.answered": {tenant: "key 1", finishReason: "stop", promptTokens: 12, completionTokens: 16, cachedTokens: 0},
    "api.keyCreated": {keyId: "4f1c2b9e-0000-4000-8000-000000000001", label: "my editor"},
    "api.keyRevoked": {keyId: "4f1c2b9e-0000-4000-8000-000000000001", label: "my editor"}
};

const kinds = Object.keys(examples) as AuditKind[];
const open: Database.Database[] = [];

afterEach(() => {
    for (const db of open.splice(0))
        db.close();
});

function databaseFile() {
    const file = path.join(tempDir("audit-events"), "cleanroom.db");
    const db = openDatabase(file, {key: {unencrypted: true}});
    open.push(db);
    return {file, db};
}

function reopened(file: string) {
    const db = openDatabase(file, {key: {unencrypted: true}});
    open.push(db);
    return new AuditLog(db);
}

function insertRow(db: Database.Database, kind: string, data: unknown, conversationId: string | null = "c1") {
    db.prepare("INSERT INTO audit_events (conversation_id, at, kind, data_json) VALUES (?, ?, ?, ?)").run(conversationId, 1_700_000_000_000, kind, JSON.stringify(data));
}

describe("the typed audit log on a real SQLite file", () => {
    it("records every kind and reads each back, after the database is closed and opened again, with the facts it recorded", () => {
        const {file, db} = databaseFile();
        const audit = new AuditLog(db);
        const recorded = kinds.map(<Kind extends AuditKind>(kind: Kind) => audit.record({kind, conversationId: "c1", data: examples[kind]}));
        db.close();
        open.splice(open.indexOf(db), 1);

        const readBack = reopened(file).events({limit: null});
        expect(readBack.map((event) => event.kind)).toEqual(kinds);
        expect(readBack).toEqual(recorded);
    });

    it("asked for some kinds, returns those events with their facts", () => {
        const {db} = databaseFile();
        const audit = new AuditLog(db);
        for (const kind of kinds)
            audit.record({kind, conversationId: "c1", data: examples[kind]});

        const scrubs = audit.events({kinds: ["scrub.verified", "scrub.failed"]});
        expect(scrubs.map((event) => [event.kind, event.data.contextId, event.data.reason])).toEqual([
            ["scrub.verified", "ctx-1", "idle"], ["scrub.failed", "ctx-1", "idle"]
        ]);
    });

    it("keeps a row of a kind this version does not know, and shows it as unrecognised with its stored kind and facts", () => {
        const {file, db} = databaseFile();
        insertRow(db, "conversation.created", {policy: "local"});
        insertRow(db, "documents.sent", {documents: 2, to: "cloud"});
        insertRow(db, "turn.local", {contextId: 42});

        const events = reopened(file).events();
        expect(events.map((event) => event.kind)).toEqual(["conversation.created", "unrecognised", "unrecognised"]);
        expect(events[1]).toMatchObject({
            conversationId: "c1", at: 1_700_000_000_000,
            data: {storedKind: "documents.sent", storedData: {documents: 2, to: "cloud"}, problem: 'no event of kind "documents.sent" is known to this version of Cleanroom'}
        });
        // A known kind whose facts are of another shape: kept whole, the problem names the facts that differ.
        expect(events[2]!.data).toMatchObject({storedKind: "turn.local", storedData: {contextId: 42}});
        expect(events[2]!.kind === "unrecognised" && events[2]!.data.problem).toMatch(/^its facts do not match its kind: data\.contextId: .*; data\.promptTokens: /);
        // Asked for by kind, a row that does not parse as that kind is not one of them.
        expect(reopened(file).events({kinds: ["turn.local"]})).toEqual([]);
    });

    it("reads rows in the shapes older builds recorded: facts added to a kind later are simply absent", () => {
        const {file, db} = databaseFile();
        insertRow(db, "conversation.deleted", {}, null);
        insertRow(db, "turn.local", {contextId: "ctx-0", promptTokens: 20, generatedTokens: 4, finishReason: "stop"});
        insertRow(db, "reply.regenerated", {removedMessages: 2});
        insertRow(db, "scrub.verified", {...scrubFacts, layoutSource: undefined});
        insertRow(db, "security.fault", {contextId: "ctx-0", what: "KV scrub could not be verified; the context was discarded"});
        // Written by the migration that gave conversations with broken ids a fresh one.
        insertRow(db, "conversation.idReplaced", {reason: "the stored id broke the conversation id rule", oldIdLength: 0});

        const events = reopened(file).events();
        expect(events.map((event) => event.kind)).toEqual([
            "conversation.deleted", "turn.local", "reply.regenerated", "scrub.verified", "security.fault", "conversation.idReplaced"
        ]);
    });
});

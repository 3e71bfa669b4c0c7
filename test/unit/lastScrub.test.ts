import {afterEach, describe, expect, it} from "vitest";
import type Database from "better-sqlite3-multiple-ciphers";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {lastScrubOf} from "../../src/core/node/audit/lastScrub.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import type {SessionEnd} from "../../src/core/node/engine/ConversationContext.js";
import {scrubFactsOf, toScrubReport} from "../../src/core/node/engine/toScrubReport.js";

const open: Database.Database[] = [];
afterEach(() => open.splice(0).forEach((db) => db.close()));

function auditLog() {
    const db = openDatabase(":memory:");
    open.push(db);
    return new AuditLog(db);
}

function sessionEnd(changes: Partial<SessionEnd> = {}): SessionEnd {
    return {
        contextId: "ctx-own", reason: "close", kvCells: 256, layers: 2, bytesZeroed: 4096, bytesChecked: 4096, nonZeroBytes: 0,
        cellsReadBack: 256, verified: true, failure: null, layoutSource: "learned", durationMs: 1.234_567_8, ...changes
    };
}

/** Records a session end's scrub as the engine does. */
function recordEnd(audit: AuditLog, conversationId: string, end: SessionEnd) {
    return end.verified
        ? audit.record({kind: "scrub.verified", conversationId, data: scrubFactsOf(end)})
        : audit.record({kind: "scrub.failed", conversationId, data: {...scrubFactsOf(end), failure: end.failure}});
}

describe("the last scrub, read from the audit trail", () => {
    it("reads back what a session end reported, with the time it was recorded: the report the API gave and the trail's are the same", () => {
        const audit = auditLog();
        const end = sessionEnd();
        const recorded = recordEnd(audit, "c1", end);

        expect(lastScrubOf(audit, "c1")).toEqual({...toScrubReport(end), at: recorded.at});
        expect(toScrubReport(end).durationMs).toBe(1.235);
    });

    it("says an unverified scrub was not verified, from its kind", () => {
        const audit = auditLog();
        recordEnd(audit, "c1", sessionEnd({verified: false, failure: "3 bytes were not zero", nonZeroBytes: 3}));
        expect(lastScrubOf(audit, "c1")).toMatchObject({verified: false, nonZeroBytes: 3, failure: "3 bytes were not zero"});
    });

    it("is null for a conversation with no scrub, and never another conversation's", () => {
        const audit = auditLog();
        recordEnd(audit, "other", sessionEnd({contextId: "ctx-other"}));
        expect(lastScrubOf(audit, "c1")).toBeNull();
        expect(lastScrubOf(audit, "other")?.contextId).toBe("ctx-other");
    });

    it("the newest scrub of any context by default; of the conversation's own context when asked, past a later embedding scrub", () => {
        const audit = auditLog();
        recordEnd(audit, "c1", sessionEnd({reason: "abort"}));
        audit.record({kind: "scrub.verified", conversationId: "c1", data: {...scrubFactsOf(sessionEnd({contextId: "ctx-embedding", reason: "request"})), purpose: "embedding"}});

        expect(lastScrubOf(audit, "c1")).toMatchObject({contextId: "ctx-embedding"});
        expect(lastScrubOf(audit, "c1", {ownContext: true})).toMatchObject({contextId: "ctx-own", reason: "abort"});
    });

    it("only scrubs recorded since a time, when asked (the CLI's chat shows a scrub of its own session, never one of an earlier run)", () => {
        const audit = auditLog();
        const earlier = recordEnd(audit, "c1", sessionEnd());
        expect(lastScrubOf(audit, "c1", {since: earlier.at + 1})).toBeNull();
        expect(lastScrubOf(audit, "c1", {since: earlier.at})).toMatchObject({contextId: "ctx-own"});
    });
});

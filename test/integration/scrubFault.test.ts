import {afterEach, describe, expect, it} from "vitest";
import {isCleanroomError, ScrubUnverifiedError} from "../../src/core/common/errors.js";
import type {AuditEventOf} from "../../src/core/common/api/auditEvents.js";
import type {BackgroundScrubFault} from "../../src/core/common/api/events.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {forcedScrubFailure, forceScrubFaults} from "../helpers/forceScrubFault.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";

const modelPath = requireTestModel();
/**
 * `--import`ed into the test build's CLI (testBuild.ts; a preload compiled apart from the CLI would
 * patch a copy of the scrubber of its own): every scrub there is a forced fault.
 */
const forcedFault = await cliWithPreloads("forceScrubFault.preload.ts");
const expectedMessage = `could not be verified (${forcedScrubFailure})`;

describe.skipIf(modelPath == null)("forced scrub fault (every scrub reported unverified): raised as SCRUB_UNVERIFIED everywhere, exit 4 in the CLI", () => {
    let restore: (() => void) | null = null;
    afterEach(() => {
        restore?.();
        restore = null;
    });

    it("forced fault: chat --prompt --json prints the reply, then SCRUB_UNVERIFIED on stderr, and exits 4", async () => {
        const {env, db} = hermeticCliEnv("scrub-fault");
        const run = await runCliCapturing([
            "chat", "--model", modelPath!, "--db", db, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"
        ], {env, ...forcedFault});
        expect(run.code).toBe(4);
        expect(JSON.parse(run.stdout)).toMatchObject({route: "local", status: "complete", isolation: {scrub: null}});
        const errors = run.stderr.trim().split("\n").map((line) => JSON.parse(line) as {error: {code: string, message: string}});
        expect(errors).toHaveLength(1); // shown once, though both the audit relay and the close report it
        expect(errors[0]!.error.code).toBe("SCRUB_UNVERIFIED");
        expect(errors[0]!.error.message).toContain(expectedMessage);
    });

    it("forced fault: interactive chat shows it at /quit, in the same words, and exits 4", async () => {
        const {env, db} = hermeticCliEnv("scrub-fault");
        const run = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--max-tokens", "8", "--temperature", "0", "--threads", "1"], {
            env, ...forcedFault, input: "Once upon a time\n/quit\n"
        });
        expect(run.code).toBe(4);
        expect(run.stderr).toContain("cleanroom: Security fault: the KV scrub of context ctx-");
        expect(run.stderr).toContain(`${expectedMessage}. The context was discarded and will not be reused. [SCRUB_UNVERIFIED]`);
        expect(run.stderr).not.toMatch(/Session ended:/);
    });

    it("forced fault: selftest fails its scrub check with the same message and exits 4", async () => {
        const {env} = hermeticCliEnv("scrub-fault");
        const run = await runCliCapturing(["selftest", "--model", modelPath!, "--threads", "1", "--json"], {env, ...forcedFault});
        expect(run.code).toBe(4);
        const report = JSON.parse(run.stdout) as {passed: boolean, checks: Array<{name: string, passed: boolean, detail: string}>};
        expect(report.passed).toBe(false);
        const scrub = report.checks.find((check) => check.name === "scrub")!;
        expect(scrub.passed).toBe(false);
        expect(scrub.detail).toContain(expectedMessage);
    });

    it("forced fault: the service answers conversations.close with SCRUB_UNVERIFIED and relays security.fault with the same error; a delete still deletes", async () => {
        const {core} = await createTestCore(modelPath!);
        const service = createCoreService(core);
        try {
            const relayed: Array<AuditEventOf<"security.fault">> = [];
            service.events.on("audit.event", (event) => void (event.kind === "security.fault" && relayed.push(event)));
            // A close and a delete are calls: their callers get the error, nothing is pushed as a background fault.
            const backgroundFaults: BackgroundScrubFault[] = [];
            service.events.on("scrub.backgroundFault", (fault) => void backgroundFaults.push(fault));
            restore = forceScrubFaults();

            const closing = core.createConversation({title: "closing"});
            await core.sendMessage({conversationId: closing.id, text: "Once upon a time", maxTokens: 4, temperature: 0});
            const closed = await service.call("conversations.close", {conversationId: closing.id});
            expect(closed.ok).toBe(false);
            const wire = !closed.ok ? closed.error : null;
            expect(wire).toMatchObject({code: "SCRUB_UNVERIFIED"});
            expect(wire!.message).toContain(expectedMessage);
            expect(relayed.map((event) => event.data.error)).toEqual([wire]);
            expect(core.isolationReport(closing.id)).toMatchObject({live: null, scrubs: {verified: 0, failed: 1}, lastScrub: {verified: false}});

            const deleting = core.createConversation({title: "deleting"});
            await core.sendMessage({conversationId: deleting.id, text: "Once upon a time", maxTokens: 4, temperature: 0});
            const error = await core.deleteConversation(deleting.id).catch((caught: unknown) => caught);
            expect(error).toBeInstanceOf(ScrubUnverifiedError);
            expect(isCleanroomError(error, "SCRUB_UNVERIFIED")).toBe(true);
            expect(core.findConversation(deleting.id)).toBeUndefined();
            expect(backgroundFaults).toEqual([]);
        } finally {
            restore?.();
            restore = null;
            service.dispose();
            await core.dispose();
        }
    });

    it("forced fault: a session that ends idle, with no call waiting, is pushed to the front ends as scrub.backgroundFault (SCRUB_UNVERIFIED), besides its audit rows", async () => {
        const {core} = await createTestCore(modelPath!, {pool: {idleTimeoutMs: 150}});
        const service = createCoreService(core);
        try {
            const faults: BackgroundScrubFault[] = [];
            service.events.on("scrub.backgroundFault", (fault) => void faults.push(fault));
            restore = forceScrubFaults();

            const idle = core.createConversation({title: "left idle"});
            await core.sendMessage({conversationId: idle.id, text: "Once upon a time", maxTokens: 4, temperature: 0});
            await expect.poll(() => faults, {timeout: 10_000}).toHaveLength(1);
            const [failed] = core.auditEvents({conversationId: idle.id, kinds: ["scrub.failed"]});
            expect(faults[0]).toEqual({
                conversationId: idle.id, contextId: failed!.data.contextId, reason: "idle",
                error: expect.objectContaining({code: "SCRUB_UNVERIFIED", message: expect.stringContaining(expectedMessage)})
            });
            expect(core.auditEvents({conversationId: idle.id, kinds: ["scrub.failed", "security.fault"]}).map((event) => event.kind)).toEqual(["scrub.failed", "security.fault"]);
        } finally {
            restore?.();
            restore = null;
            service.dispose();
            await core.dispose();
        }
    });
});

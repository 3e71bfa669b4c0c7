import {describe, expect, it} from "vitest";
import {internalErrorMessage} from "../../src/core/common/errors.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {decryptedRows} from "../helpers/decryptedRows.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
/** The test build's CLI (testBuild.ts), with SQLite failing to record the scrub. */
const failingAudit = await cliWithPreloads("forceAuditFailure.preload.ts");
const stackLine = /^\s+at /m;
const notADatabase = {error: {code: "INTERNAL", message: internalErrorMessage, details: {}}, internal: "SqliteError [SQLITE_NOTADB]: file is not a database"};
const notADatabaseLine = "cleanroom: internal error: SqliteError [SQLITE_NOTADB]: file is not a database\n";
/** The test build's CLI, with an error nothing catches thrown while the first reply streams (see the preload). */
const strayMidTurn = await cliWithPreloads("strayErrorMidTurn.preload.ts");

/**
 * A SQLite error no command awaits (a listener's, an unhandled rejection) is reported like any other
 * error without a Cleanroom code: INTERNAL, its detail (class, SQLite code, message) shown as the
 * in-process core's local log, never a stack.
 */
describe.skipIf(modelPath == null)("SQLite errors outside a command's await", () => {
    const chat = (json: boolean) => ["chat", "--model", modelPath!, "--prompt", "Once upon a time", "--max-tokens", "4", "--threads", "1",
        ...(json ? ["--json"] : [])];

    it("a listener's SQLITE_NOTADB: one JSON error line (INTERNAL, the detail beside it) with --json, one clean line without, exit 1, no stack", async () => {
        const {env, db} = hermeticCliEnv("stray-listener");
        const json = await runCliCapturing([...chat(true), "--db", db], {env, ...failingAudit});
        expect(json.stderr).not.toMatch(stackLine);
        expect(json.code).toBe(1);
        expect(JSON.parse(json.stdout)).toMatchObject({route: "local"}); // the reply was printed
        const lines = json.stderr.trim().split("\n");
        expect(lines.map((line) => JSON.parse(line))).toEqual([notADatabase]);

        const plain = await runCliCapturing([...chat(false), "--db", db], {env, ...failingAudit});
        expect(plain.stderr).not.toMatch(stackLine);
        expect(plain.code).toBe(1);
        expect(plain.stderr).toContain(notADatabaseLine);
        expect(plain.stderr.match(/SQLITE_NOTADB/g)).toHaveLength(1);
    });

    it("an unhandled rejection: reported as JSON, the process ends with 1, no stack", async () => {
        const {env, db} = hermeticCliEnv("stray-rejection", {CLEANROOM_FORCE_AUDIT_FAILURE: "rejection"});
        const run = await runCliCapturing([...chat(true), "--db", db], {env, ...failingAudit});
        expect(run.stderr).not.toMatch(stackLine);
        expect(run.code).toBe(1);
        for (const line of run.stderr.trim().split("\n"))
            expect(JSON.parse(line)).toEqual(notADatabase);
    });

    it("the stack is there with CLEANROOM_DEBUG=1", async () => {
        const {env, db} = hermeticCliEnv("stray-debug", {CLEANROOM_DEBUG: "1"});
        const run = await runCliCapturing([...chat(false), "--db", db], {env, ...failingAudit});
        expect(run.stderr).toContain(notADatabaseLine);
        expect(run.stderr).toMatch(/SqliteError: file is not a database\n\s+at /);
    });
});

describe.skipIf(modelPath == null)("an error no command awaits, thrown while a session is open", () => {
    it("is reported (exit 1, no stack), and the open session still ends scrubbed and verified before the process exits", async () => {
        const {env, db} = hermeticCliEnv("stray-mid-turn");
        const run = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--conversation", "mid-turn", "--prompt", "Once upon a time",
            "--max-tokens", "64", "--threads", "1", "--json"], {env, ...strayMidTurn});
        expect(run.stderr).not.toMatch(stackLine);
        expect(run.code).toBe(1);
        expect(JSON.parse(run.stderr.trim().split("\n")[0]!)).toEqual({error: {code: "INTERNAL", message: internalErrorMessage, details: {}},
            internal: "Error: forced by the test: an error no command awaits, thrown mid-turn"});

        const events = JSON.parse(decryptedRows(db).find((table) => table.table === "audit_events")!.json) as Array<{kind: string, conversation_id: string | null, data_json: string}>;
        const scrubs = events.filter((event) => event.kind.startsWith("scrub.")).map((event) => [event.kind, event.conversation_id]);
        expect(scrubs).toEqual([["scrub.started", "mid-turn"], ["scrub.verified", "mid-turn"]]);
    });
});

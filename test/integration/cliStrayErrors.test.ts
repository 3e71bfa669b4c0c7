import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";
import {cliEntry, runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
/** Run from source, with SQLite failing to record the scrub (the compiled bundle has its own copy of the audit log). */
const failingAudit = {nodeArgs: ["--import", path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/forceAuditFailure.preload.ts")], entry: cliEntry};
const stackLine = /^\s+at /m;

/** A SQLite error no command awaits (a listener's, an unhandled rejection) is reported like any other: code and message, never a stack. */
describe.skipIf(modelPath == null)("SQLite errors outside a command's await", () => {
    const chat = (json: boolean) => ["chat", "--model", modelPath!, "--prompt", "Once upon a time", "--max-tokens", "4", "--threads", "1",
        ...(json ? ["--json"] : [])];

    it("a listener's SQLITE_NOTADB: one JSON error line with --json, one clean line without, exit 1, no stack", async () => {
        const {env, db} = hermeticCliEnv("stray-listener");
        const json = await runCliCapturing([...chat(true), "--db", db], {env, ...failingAudit});
        expect(json.stderr).not.toMatch(stackLine);
        expect(json.code).toBe(1);
        expect(JSON.parse(json.stdout)).toMatchObject({route: "local"}); // the reply was printed
        const lines = json.stderr.trim().split("\n");
        expect(lines.map((line) => JSON.parse(line))).toEqual([{error: {code: "SQLITE_NOTADB", message: "file is not a database", details: {}}}]);

        const plain = await runCliCapturing([...chat(false), "--db", db], {env, ...failingAudit});
        expect(plain.stderr).not.toMatch(stackLine);
        expect(plain.code).toBe(1);
        expect(plain.stderr).toContain("cleanroom: file is not a database [SQLITE_NOTADB]\n");
        expect(plain.stderr.match(/SQLITE_NOTADB/g)).toHaveLength(1);
    });

    it("an unhandled rejection: reported as JSON, the process ends with 1, no stack", async () => {
        const {env, db} = hermeticCliEnv("stray-rejection", {CLEANROOM_FORCE_AUDIT_FAILURE: "rejection"});
        const run = await runCliCapturing([...chat(true), "--db", db], {env, ...failingAudit});
        expect(run.stderr).not.toMatch(stackLine);
        expect(run.code).toBe(1);
        for (const line of run.stderr.trim().split("\n"))
            expect(JSON.parse(line)).toEqual({error: {code: "SQLITE_NOTADB", message: "file is not a database", details: {}}});
    });

    it("the stack is there with CLEANROOM_DEBUG=1", async () => {
        const {env, db} = hermeticCliEnv("stray-debug", {CLEANROOM_DEBUG: "1"});
        const run = await runCliCapturing([...chat(false), "--db", db], {env, ...failingAudit});
        expect(run.stderr).toContain("cleanroom: file is not a database [SQLITE_NOTADB]\n");
        expect(run.stderr).toMatch(/SqliteError: file is not a database\n\s+at /);
    });
});

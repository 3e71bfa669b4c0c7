import fs from "node:fs";
import path from "node:path";
import {envelopeFile} from "../../src/core/node/database/keys/keyEnvelope.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import {databaseFiles, makeTestCanary, scanForSecrets, walkFiles, type Needle} from "./helpers/scanForSecrets.js";
import {decryptedCopy} from "./helpers/decryptedCopy.js";

const modelPath = requireTestModel();

/** Where conversation text may live: the conversation's own rows. Everything else must never hold it. */
// messages_fts.content: the full-text index reads its text from messages.content (an external-content FTS5 table), so it is the same column seen twice.
const allowedColumns = new Set(["messages.content", "messages_fts.content", "conversations.title", "conversations.settings_json"]);

function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string) {
    return runCliCapturing(args, {env, input});
}

/**
 * Claim: conversation text (and any canary planted in it) is kept only in that conversation's
 * rows. The audit log holds counts, ids and kinds; stderr (errors, debug stacks included), every
 * other table and every other file the core writes (app folder, temp folder, scrub scratch)
 * never hold it. The scan helper is the one the cloud tests reuse for API keys.
 */
describe.skipIf(modelPath == null)("secrets: conversation text stays in its rows", () => {
    it("one-turn, interactive, refused and debug runs: no canary in stderr, audit events, other tables or other files", async () => {
        const home = tempDir("secrets-home");
        const tmp = tempDir("secrets-tmp");
        const database = path.join(home, "cleanroom.db");
        const userCanary = makeTestCanary("user");
        const systemCanary = makeTestCanary("system");
        const needles: Needle[] = [{label: "user canary", value: userCanary}, {label: "system canary", value: systemCanary}];
        const env = {...process.env, CLEANROOM_HOME: home, TMPDIR: tmp, CLEANROOM_MODEL: modelPath!, CLEANROOM_DEBUG: ""};
        const base = ["chat", "--db", database, "--threads", "1", "--max-tokens", "24", "--temperature", "0"];
        // The scrub scratch root of this test file alone (test/setup/hermetic.ts): everything in it is ours to scan.
        const scratchRoot = process.env.CLEANROOM_SCRATCH_DIR!;

        const runs = [
            await runCli([...base, "--context-size", "512", "--system", `Hide ${systemCanary}`, "--prompt", `Once upon a time ${userCanary}`, "--json"], env),
            await runCli([...base, "--context-size", "512", "--prompt", `Tell me ${userCanary}`], env),
            await runCli([...base, "--context-size", "512", "--conversation", "interactive-1"], env, `Hello ${userCanary}\nAgain ${userCanary}\n/quit\n`),
            // Refused before evaluation (too long for the context): the error must describe sizes, not the text.
            await runCli([...base, "--context-size", "256", "--prompt", `${userCanary} `.repeat(80), "--json"], env),
            await runCli([...base, "--context-size", "256", "--prompt", `${userCanary} `.repeat(80)], {...env, CLEANROOM_DEBUG: "1"})
        ];
        expect(runs.slice(0, 3).map((run) => run.code)).toEqual([0, 0, 0]);
        expect(runs[3]!.code).toBe(1);
        expect(runs[3]!.stderr).toMatch(/CONTEXT_OVERFLOW/);
        expect(runs[4]!.stderr).toMatch(/at .*Core/); // the debug run did print a stack

        const stderrScan = scanForSecrets(runs.map((run, index) => ({kind: "text", name: `stderr of run ${index}`, text: run.stderr})), needles);
        expect(stderrScan.findings).toEqual([]);

        // Every column of every table, read through SQL.
        const db = openDatabase(database, {readonly: true});
        const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{name: string}>).map((row) => row.name);
        const hits: string[] = [];
        let auditEvents = 0;
        for (const table of tables)
            for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Array<Record<string, unknown>>)
                for (const [column, value] of Object.entries(row))
                    if (typeof value === "string" && needles.some((needle) => value.includes(needle.value)))
                        hits.push(`${table}.${column}`);
        for (const row of db.prepare("SELECT kind, data_json FROM audit_events").all() as Array<{kind: string, data_json: string}>) {
            auditEvents++;
            // Counts, ids, kinds, short fixed words: no long free text.
            for (const value of leaves(JSON.parse(row.data_json)))
                if (typeof value === "string")
                    expect(value.length, `${row.kind}: "${value.slice(0, 40)}…"`).toBeLessThanOrEqual(100);
        }
        const stored = (db.prepare("SELECT COUNT(*) AS n FROM messages WHERE content LIKE ?").get(`%${userCanary}%`) as {n: number}).n;
        db.close();
        expect(stored, "the canary was stored in messages (else the scan proves nothing)").toBeGreaterThanOrEqual(3);
        expect(auditEvents).toBeGreaterThan(10);
        expect([...new Set(hits)].filter((where) => !allowedColumns.has(where))).toEqual([]);

        // The raw bytes: a copy with the allowed rows removed and vacuumed must not hold it anywhere (indexes, free pages, other tables).
        const copy = path.join(tmp, "copy.db");
        const source = openDatabase(database, {readonly: true});
        source.exec(`VACUUM INTO '${copy.replaceAll("'", "''")}'`); // encrypted under the same key
        source.close();
        fs.copyFileSync(envelopeFile(database), envelopeFile(copy));
        const stripped = openDatabase(copy);
        stripped.pragma("secure_delete = ON");
        stripped.exec("DELETE FROM messages; DELETE FROM conversations; VACUUM;");
        stripped.close();
        // Its raw bytes, and every page of it decrypted with the key: encryption alone must not be what hides it.
        const rawScan = scanForSecrets([...databaseFiles(copy), {kind: "file", path: decryptedCopy(copy, tmp)}], needles);
        expect(rawScan.findings).toEqual([]);
        fs.rmSync(copy);

        // Every other file the core wrote: app folder (minus the database itself), temp folder, the scrub scratch root.
        const otherFiles = [...walkFiles(home), ...walkFiles(tmp)].filter((file) => !file.startsWith(database));
        const filesScan = scanForSecrets([
            ...otherFiles.map((file) => ({kind: "file" as const, path: file})),
            {kind: "directory" as const, path: scratchRoot}
        ], needles);
        expect(filesScan.findings).toEqual([]);
        expect(fs.readdirSync(scratchRoot), "scrub scratch folders are removed").toEqual([]);

        const dbBytes = scanForSecrets(databaseFiles(database), []).bytesScanned;
        console.info(`[secrets] bytes scanned: stderr ${stderrScan.bytesScanned}, stripped database copy ${rawScan.bytesScanned}, ` +
            `other files ${filesScan.bytesScanned} (${filesScan.sourcesScanned}); database read through SQL: ${dbBytes} bytes, ${auditEvents} audit events`);
    }, 240_000);

    it("the scanner finds a secret in every encoding it claims (utf8, utf16le, base64 at any alignment, hex)", () => {
        const secret = makeTestCanary("enc");
        const texts = [
            Buffer.from(`x${secret}y`, "utf8"),
            Buffer.from(`x${secret}y`, "utf16le"),
            ...["", "a", "ab"].map((prefix) => Buffer.from(Buffer.from(`${prefix}${secret}tail`).toString("base64"))),
            Buffer.from(`Authorization: ${Buffer.from(secret).toString("hex")}`)
        ];
        const report = scanForSecrets(texts.map((bytes, index) => ({kind: "buffer", name: `sample ${index}`, bytes})), [{label: "secret", value: secret}]);
        expect(new Set(report.findings.map((finding) => finding.where)).size).toBe(texts.length);
    });
});

function* leaves(value: unknown): Generator<unknown> {
    if (value != null && typeof value === "object")
        for (const item of Object.values(value))
            yield* leaves(item);
    else
        yield value;
}

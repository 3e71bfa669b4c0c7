import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {migrations} from "../../src/core/node/database/migrations.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {testBuildScript} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

type JsonError = {error: {code: string, message: string, details: Record<string, unknown>}};

describe.skipIf(modelPath == null)("the CLI refuses what the API refuses, naming the flag, the value and the rule", () => {
    const {env, db} = hermeticCliEnv("cli-validation");
    const chat = (...flags: string[]) => runCliCapturing(["chat", "--model", modelPath!, "--db", db, ...flags], {env});

    const refused: Array<[string[], string, RegExp]> = [
        [["--max-tokens", "-5"], "--max-tokens", /whole number from 1 to 32768/],
        [["--max-tokens", "0"], "--max-tokens", /whole number from 1 to 32768/],
        [["--temperature", "-1"], "--temperature", /number from 0 to 2/],
        [["--threads", "0"], "--threads", /whole number from 1 to 256/],
        [["--threads", "-1"], "--threads", /whole number from 1 to 256/],
        [["--threads", "100000"], "--threads", /whole number from 1 to 256/],
        [["--context-size", "0"], "--context-size", /whole number from 128 to 131072/],
        [["--context-size", "1"], "--context-size", /whole number from 128 to 131072/],
        [["--seed", "-3"], "--seed", /whole number from 0 to 4294967295/]
    ];

    it.each(refused)("%j: exit 1, {error: {code, message, details}} on stderr with --json, and nothing stored", async (flags, option, rule) => {
        const run = await chat("--prompt", "Once upon a time", ...flags, "--json");
        expect(run.code).toBe(1);
        expect(run.stdout).toBe("");
        const {error} = JSON.parse(run.stderr) as JsonError;
        expect(error).toMatchObject({code: "INVALID_INPUT", details: {option, value: flags[1], rule: expect.stringMatching(rule)}});
        expect(error.message).toContain(`${option} "${flags[1]}"`);
        expect(error.message).toMatch(rule);
    });

    it("without --json: one line on stderr that names the flag, the value and the rule", async () => {
        const run = await chat("--prompt", "Once upon a time", "--threads", "-1");
        expect(run.code).toBe(1);
        expect(run.stderr.trim()).toBe('cleanroom: --threads "-1" is refused: it must be a whole number from 1 to 256. [INVALID_INPUT]');
    });

    it("an empty or blank --prompt is refused without echoing the prompt", async () => {
        for (const [prompt, reason] of [["", "a message cannot be empty"], ["   \t", "a message cannot be only whitespace"]] as const) {
            const run = await chat("--prompt", prompt, "--json");
            expect(run.code).toBe(1);
            expect((JSON.parse(run.stderr) as JsonError).error).toMatchObject({
                code: "INVALID_INPUT", details: {option: "--prompt", length: prompt.length, rule: reason}
            });
        }
        const listed = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(JSON.parse(listed.stdout)).toEqual({conversations: []});
    });

    it("usage errors are JSON too with --json", async () => {
        const run = await runCliCapturing(["audit", "--model", "m", "--json"], {env, entry: await testBuildScript("toolsCli")});
        expect(run.code).toBe(1);
        expect((JSON.parse(run.stderr) as JsonError).error).toMatchObject({code: "INVALID_INPUT", message: expect.stringContaining("--endpoint")});
    });
});

describe.skipIf(modelPath == null)("one conversation id rule at every door: CLI, RPC, store", () => {
    const badIds = ["../../x", "", "a".repeat(5000), "..", "has space", "slash/inside"];
    const {env, db} = hermeticCliEnv("cli-ids");
    let core: Core;
    let service: CoreService;

    beforeAll(async () => {
        core = Core.create(await loadLlama(), {database: path.join(tempDir("ids"), "rpc.db")});
        service = createCoreService(core);
    });
    afterAll(async () => {
        service?.dispose();
        await core?.dispose();
    });

    it.each(badIds.map((id) => [id.length > 20 ? `${id.slice(0, 8)}… (${id.length})` : JSON.stringify(id), id]))(
        "%s is refused by chat --conversation, conversations show/delete, the RPC and the store", async (_label, id) => {
            const created = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--conversation", id, "--prompt", "Once", "--json"], {env});
            expect(created.code).toBe(1);
            expect((JSON.parse(created.stderr) as JsonError).error).toMatchObject({code: "INVALID_INPUT", details: {option: "--conversation"}});
            for (const command of ["show", "delete"]) {
                const run = await runCliCapturing(["conversations", command, id, "--db", db, "--json"], {env});
                expect(run.code).toBe(1);
                expect((JSON.parse(run.stderr) as JsonError).error.code).toBe("INVALID_INPUT");
            }

            const viaRpc = await service.call("conversations.get", {conversationId: id});
            expect(viaRpc).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});

            const sqlite = new Database(":memory:");
            for (const migrate of migrations)
                migrate(sqlite);
            expect(() => new ConversationStore(sqlite).create({id})).toThrow(expect.objectContaining({code: "INVALID_INPUT"}));
            expect(new ConversationStore(sqlite).list()).toEqual([]);
            sqlite.close();
        });

    it("nothing was created by the refused ids; a valid id opens and deletes everywhere", async () => {
        const listed = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(JSON.parse(listed.stdout)).toEqual({conversations: []});

        const made = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--conversation", "notes-2026.v1:a_b",
            "--prompt", "Once upon a time", "--max-tokens", "4", "--threads", "1", "--json"], {env});
        expect(made.code).toBe(0);
        expect((await runCliCapturing(["conversations", "show", "notes-2026.v1:a_b", "--db", db, "--json"], {env})).code).toBe(0);
        expect((await runCliCapturing(["conversations", "delete", "notes-2026.v1:a_b", "--db", db, "--json"], {env})).code).toBe(0);
    });
});

describe("conversations stored with an id that breaks the rule (written before the rule held at every door)", () => {
    it("get a fresh id when the database is opened, keep their messages and audit trail, and can be opened and deleted", async () => {
        const {env, db} = hermeticCliEnv("bad-id-migration");
        const old = new Database(db);
        for (const migrate of migrations.slice(0, 2))
            migrate(old);
        old.pragma("user_version = 2");
        const now = Date.now();
        old.prepare("INSERT INTO conversations (id, title, policy, settings_json, created_at, updated_at) VALUES (?, ?, 'local', '{}', ?, ?)")
            .run("../../x", "stranded", now, now);
        old.prepare("INSERT INTO messages (conversation_id, role, content, status, created_at, updated_at) VALUES (?, 'user', 'kept text', 'complete', ?, ?)")
            .run("../../x", now, now);
        old.prepare("INSERT INTO audit_events (conversation_id, at, kind, data_json) VALUES (?, ?, 'conversation.created', '{}')").run("../../x", now);
        old.close();

        const listed = JSON.parse((await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env})).stdout) as
            {conversations: Array<{id: string, title: string}>};
        expect(listed.conversations).toHaveLength(1);
        const [renamed] = listed.conversations;
        expect(renamed).toMatchObject({title: "stranded"});
        expect(renamed!.id).toMatch(/^[0-9a-f-]{36}$/);

        const shown = await runCliCapturing(["conversations", "show", renamed!.id, "--db", db, "--json"], {env});
        expect(shown.code).toBe(0);
        expect(shown.stdout).toContain("kept text");
        expect(shown.stdout).toContain("conversation.idReplaced");
        expect((await runCliCapturing(["conversations", "delete", renamed!.id, "--db", db, "--json"], {env})).code).toBe(0);
        expect(JSON.parse((await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env})).stdout)).toEqual({conversations: []});
    });
});

describe("a database written by a newer Cleanroom", () => {
    it("is refused with DATABASE_TOO_NEW and a message that says to update, not as an internal error", async () => {
        const {env, db} = hermeticCliEnv("newer-schema");
        const newer = new Database(db);
        for (const migrate of migrations)
            migrate(newer);
        newer.pragma(`user_version = ${migrations.length + 1}`);
        newer.close();

        const run = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(run.code).toBe(1);
        expect((JSON.parse(run.stderr) as JsonError).error).toMatchObject({
            code: "DATABASE_TOO_NEW",
            message: expect.stringMatching(/written by a newer Cleanroom \(schema \d+, this build knows \d+\): update Cleanroom to open it/),
            details: {schema: migrations.length + 1, known: migrations.length}
        });
    });
});

import path from "node:path";
import {describe, expect, it} from "vitest";
import {runCli} from "../../tools/spawnCli.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("CLI contract", () => {
    it("chat --prompt --json: one turn, the documented fields, the session's scrub report; history persists", async () => {
        const db = path.join(tempDir("cli"), "cli.db");
        const first = JSON.parse(await runCli([
            "chat", "--model", modelPath!, "--db", db, "--conversation", "story-1", "--prompt", "Once upon a time",
            "--max-tokens", "12", "--temperature", "0", "--threads", "1", "--json"
        ]));
        expect(first).toMatchObject({conversationId: "story-1", route: "local", status: "complete"});
        expect(typeof first.reply).toBe("string");
        expect(first.reply.length).toBeGreaterThan(0);
        expect(first.tokens).toMatchObject({generated: expect.any(Number), prompt: expect.any(Number)});
        expect(first.isolation).toMatchObject({contextId: expect.stringMatching(/^ctx-/), kvCells: expect.any(Number), kvBytes: expect.any(Number)});
        expect(first.isolation.scrub).toMatchObject({verified: true, nonZeroBytes: 0, contextId: first.isolation.contextId, reason: "close"});
        expect(first.isolation.scrub.bytesChecked).toBe(first.isolation.kvBytes);

        await runCli(["chat", "--model", modelPath!, "--db", db, "--conversation", "story-1", "--prompt", "And then?",
            "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"]);
        const listed = JSON.parse(await runCli(["conversations", "list", "--db", db, "--json"]));
        expect(listed.conversations).toEqual([expect.objectContaining({id: "story-1", messageCount: 4, policy: "local"})]);
        const shown = JSON.parse(await runCli(["conversations", "show", "story-1", "--db", db, "--json"]));
        expect(shown.messages.map((message: {role: string}) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
        expect(shown.audit.map((event: {kind: string}) => event.kind)).toContain("scrub.verified");

        await runCli(["conversations", "delete", "story-1", "--db", db, "--json"]);
        expect(JSON.parse(await runCli(["conversations", "list", "--db", db, "--json"])).conversations).toEqual([]);
    });

    it("errors go to stderr with a non-zero exit, as JSON with --json", async () => {
        const error = await runCli(["chat", "--model", "/nowhere/model.gguf", "--prompt", "hi", "--json", "--db", path.join(tempDir("cli"), "e.db")])
            .catch((caught: Error) => caught);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/exited with 1: \{"error":\{"code":"MODEL_NOT_FOUND"/);

        const missing = await runCli(["conversations", "show", "nope", "--db", path.join(tempDir("cli"), "e.db"), "--json"]).catch((caught: Error) => caught);
        expect((missing as Error).message).toMatch(/"code":"CONVERSATION_NOT_FOUND"/);
    });

    it("chat without --model uses the default model of the app's models folder", async () => {
        const home = tempDir("cli-home");
        const env = {...process.env, CLEANROOM_HOME: home, CLEANROOM_MODEL: ""};
        await expect(runCli(["chat", "--prompt", "hi", "--json"], {env})).rejects.toThrow(/"code":"MODEL_NOT_LOADED"/);
        const imported = JSON.parse(await runCli(["models", "import", modelPath!, "--json"], {env}));
        await runCli(["models", "default", imported.model?.id ?? imported.id ?? modelPath!, "--json"], {env});
        const reply = JSON.parse(await runCli(["chat", "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"], {env}));
        expect(reply).toMatchObject({route: "local", status: "complete"});
    });

    it("selftest --json passes every check on this machine", async () => {
        const report = JSON.parse(await runCli(["selftest", "--model", modelPath!, "--threads", "1", "--json"]));
        expect(report.passed).toBe(true);
        expect(report.checks.map((check: {name: string}) => check.name)).toEqual(["scrub", "differential", "overflow", "ownership", "shutdown"]);
        for (const check of report.checks)
            expect(check).toMatchObject({passed: true, detail: expect.any(String)});
    });
});

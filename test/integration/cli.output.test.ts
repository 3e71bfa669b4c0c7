import {spawn} from "node:child_process";
import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {cliCommand, runCliCapturing} from "../../tools/spawnCli.js";
import {formatBytes} from "../../src/core/common/formatBytes.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {runCliInPseudoTerminal} from "../helpers/pseudoTerminal.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

/** Where each header starts, so that every row can be checked against it. */
function columnStarts(header: string, names: string[]) {
    return names.map((name) => {
        const at = header.indexOf(name);
        expect(at, `header "${header}" has ${name}`).toBeGreaterThanOrEqual(0);
        return at;
    });
}

/** A long reply (the test model keeps going for 1,800 tokens, several seconds), so that Ctrl+C lands mid-reply. */
const longReply = ["--max-tokens", "1800", "--context-size", "2048", "--threads", "1", "--temperature", "0"];

describe.skipIf(modelPath == null)("CLI output people read", () => {
    it("conversations list: a header and aligned columns", async () => {
        const {env, db} = hermeticCliEnv("cli-table");
        const sqlite = openDatabase(db);
        const store = new ConversationStore(sqlite);
        store.create({id: "a", title: "Short"});
        store.create({id: "a-much-longer-conversation-id", title: "Trip to the coast, with notes", policy: "cloud-allowed"});
        sqlite.close();

        const run = await runCliCapturing(["conversations", "list", "--db", db], {env});
        expect(run.code).toBe(0);
        const [header, ...rows] = run.stdout.trimEnd().split("\n");
        expect(header).toMatch(/^ID +POLICY +MESSAGES +UPDATED +TITLE$/);
        expect(rows).toHaveLength(2);
        const [policy, updated, title] = columnStarts(header!, ["POLICY", "UPDATED", "TITLE"]);
        const messagesEnd = header!.indexOf("MESSAGES") + "MESSAGES".length;
        for (const row of rows) {
            expect(row[policy! - 1]).toBe(" ");
            expect(row.slice(policy!)).toMatch(/^(local|cloud-allowed) /);
            expect(row.slice(messagesEnd - 1, messagesEnd)).toBe("0");
            expect(row.slice(updated!)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d /);
            expect(row.slice(title!)).toMatch(/^(Short|Trip to the coast, with notes)$/);
        }
    });

    it("models list: tables with headers, sizes in MiB/GiB as the app shows them", async () => {
        const {env} = hermeticCliEnv("cli-models");
        expect((await runCliCapturing(["models", "import", modelPath!, "--json"], {env})).code).toBe(0);
        const run = await runCliCapturing(["models", "list"], {env});
        expect(run.code).toBe(0);
        expect(run.stdout).not.toMatch(/\d (KB|MB|GB)\b/);
        expect(run.stdout).toMatch(/^ {2} {3}ID +SIZE +ORIGIN +FITS THIS MACHINE +PATH$/m);
        expect(run.stdout).toMatch(/^ {2}ID +MODEL +QUANT +SIZE +LICENSE +FITS THIS MACHINE +INSTALLED AS$/m);
        expect(run.stdout).toContain(`${formatBytes(fs.statSync(modelPath!).size)}  import`);
        expect(run.stdout).toMatch(/\d(\.\d)? GiB/);
    });

    it("errors read the same in every command; --json on interactive chat is refused", async () => {
        const {env, db} = hermeticCliEnv("cli-errors");
        const removed = await runCliCapturing(["models", "remove", "nope"], {env});
        expect(removed.code).toBe(1);
        expect(removed.stderr).toBe('cleanroom: No registered model "nope". [MODEL_NOT_FOUND]\n');

        const interactiveJson = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--json"], {env});
        expect(interactiveJson.code).toBe(1);
        expect(JSON.parse(interactiveJson.stderr).error).toMatchObject({code: "INVALID_INPUT", message: expect.stringContaining("--json needs --prompt")});
    });

    it("interactive chat with piped input answers every line in turn, even lines that arrive while a reply is generated", async () => {
        const {env, db} = hermeticCliEnv("cli-piped");
        const questions = ["Once upon a time", "The dog ran", "The cat sat"];
        const run = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--conversation", "piped", "--max-tokens", "8", "--threads", "1"],
            {env, input: questions.join("\n") + "\n"});
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.match(/assistant> /g)).toHaveLength(3);

        const shown = await runCliCapturing(["conversations", "show", "piped", "--db", db, "--json"], {env});
        const messages = JSON.parse(shown.stdout).messages as Array<{role: string, content: string}>;
        expect(messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual(questions);
        expect(messages.filter((message) => message.role === "assistant")).toHaveLength(3);
    });

    it("interactive chat on a real terminal: Ctrl+C stops the reply, which ends with (stopped) and is kept as interrupted", async () => {
        const {env, db} = hermeticCliEnv("cli-stop-tty");
        const terminal = runCliInPseudoTerminal(["chat", "--model", modelPath!, "--db", db, "--conversation", "stop-me", ...longReply], {env});
        await terminal.waitFor(/you> /);
        terminal.type("Once upon a time\r");
        const from = terminal.output().length;
        await terminal.waitFor(/assistant> \S+ \S+/, {from});
        terminal.type("\x03");
        // readline redraws its prompt with cursor codes (ESC [1G, ESC [0J) on a terminal.
        await terminal.waitFor(/ \(stopped\)\r?\n(\x1b\[[0-9;]*[A-Za-z])*you> /, {from});
        terminal.type("/quit\r");
        expect(await terminal.exited).toBe(0);
        expect(terminal.output()).toMatch(/Session ended: \d+ KV cells zeroed/);

        const shown = await runCliCapturing(["conversations", "show", "stop-me", "--db", db, "--json"], {env});
        const messages = JSON.parse(shown.stdout).messages as Array<{role: string, status: string, content: string}>;
        expect(messages.map((message) => [message.role, message.status])).toEqual([["user", "complete"], ["assistant", "interrupted"]]);
        expect(messages[1]!.content.length).toBeGreaterThan(0);
    });

    it("interactive chat without a terminal: SIGINT to the process stops the reply with (stopped), and the session still ends scrubbed", async () => {
        const {env, db} = hermeticCliEnv("cli-stop-signal");
        const {command, args} = cliCommand(["chat", "--model", modelPath!, "--db", db, "--conversation", "stop-me", ...longReply]);
        const child = spawn(command, args, {env, stdio: ["pipe", "pipe", "pipe"]});
        let stdout = "";
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        const seen = (pattern: RegExp) => new Promise<void>((resolve) => {
            const check = () => pattern.test(stdout) && (child.stdout.off("data", check), resolve());
            child.stdout.on("data", check);
        });
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        const exited = new Promise<number | null>((resolve) => child.on("close", resolve));

        child.stdin.write("Once upon a time\n");
        await seen(/assistant> \S+ \S+/);
        child.kill("SIGINT");
        await seen(/ \(stopped\)\nyou> $/);
        child.stdin.end("/quit\n");
        expect(await exited).toBe(0);
        expect(stderr).toMatch(/Session ended: \d+ KV cells zeroed/);
    });
});

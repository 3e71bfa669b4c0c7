import path from "node:path";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {describe, expect, it} from "vitest";
import {runCli} from "../../tools/spawnCli.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("the title chat gives a new conversation from its prompt", () => {
    it("is cut on a grapheme boundary, so the database holds valid UTF-8 (an emoji at UTF-16 unit 60 used to be split)", async () => {
        const dir = tempDir("titles");
        const db = path.join(dir, "titles.db");
        const env = {...process.env, CLEANROOM_HOME: path.join(dir, "home"), TMPDIR: dir};
        // 59 letters, then a ZWJ family (11 UTF-16 units): text.slice(0, 60) kept only its first high surrogate.
        const prompt = "a".repeat(59) + "👨‍👩‍👧‍👦 and 🇫🇷 e\u0301 afterwards";
        await runCli(["chat", "--model", modelPath!, "--db", db, "--conversation", "emoji-title", "--prompt", prompt,
            "--max-tokens", "4", "--temperature", "0", "--threads", "1", "--json"], {env});

        const database = openDatabase(db, {readonly: true});
        const row = database.prepare("SELECT hex(title) AS hex FROM conversations WHERE id = ?").get("emoji-title") as {hex: string};
        database.close();
        const bytes = Buffer.from(row.hex, "hex");
        const title = new TextDecoder("utf-8", {fatal: true}).decode(bytes); // throws on the old ED A0 BD bytes
        expect(title).toBe("a".repeat(59) + "…");
        const listed = JSON.parse(await runCli(["conversations", "list", "--db", db, "--json"], {env})) as {conversations: Array<{title: string}>};
        expect(listed.conversations[0]!.title).toBe(title);
        expect(listed.conversations[0]!.title).not.toContain("\uFFFD");
    }, 900_000);
});

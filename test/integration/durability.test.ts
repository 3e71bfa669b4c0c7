import {spawn} from "node:child_process";
import {describe, expect, it} from "vitest";
import {cliCommand} from "../../tools/spawnCli.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("durability", () => {
    it("kill -9 in the middle of a streamed reply: earlier messages intact, the partial reply kept and marked interrupted", async () => {
        const {core, database} = await createTestCore(modelPath!);
        const conversation = core.createConversation({title: "durable"});
        await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 16, temperature: 0});
        await core.sendMessage({conversationId: conversation.id, text: "Tell me about the dog.", maxTokens: 16, temperature: 0});
        const before = core.getConversation(conversation.id).messages;
        await core.dispose();

        const {command, args} = cliCommand([
            "chat", "--model", modelPath!, "--db", database, "--conversation", conversation.id, "--threads", "1",
            "--context-size", "2048", "--prompt", "Tell me a very long story about a girl and her cat.", "--max-tokens", "1500",
            "--temperature", "0.9", "--seed", "7", "--json"
        ]);
        const child = spawn(command, args, {stdio: "ignore"});
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));

        // Watch the database (WAL lets a reader in while the child writes) until the reply has started to grow.
        const reader = openDatabase(database, {readonly: true});
        const deadline = Date.now() + 60_000;
        let partial: {id: number, content: string} | undefined;
        while (Date.now() < deadline && child.exitCode == null) {
            partial = reader.prepare("SELECT id, content FROM messages WHERE conversation_id = ? AND status = 'streaming' AND content != ''")
                .get(conversation.id) as typeof partial;
            if (partial != null)
                break;
            await new Promise((resolve) => setTimeout(resolve, 2));
        }
        reader.close();
        expect(partial, "the child should have saved part of its reply before finishing").toBeDefined();
        child.kill("SIGKILL");
        expect(await exited).toBe("SIGKILL");

        const db = openDatabase(database);
        try {
            expect(db.pragma("integrity_check", {simple: true})).toBe("ok");
            const after = new ConversationStore(db).messages(conversation.id);
            expect(after.slice(0, before.length)).toEqual(before);
            const reply = after.find((message) => message.id === partial!.id)!;
            expect(reply.status).toBe("interrupted");
            expect(reply.content.startsWith(partial!.content)).toBe(true);
            expect(reply.content.length).toBeGreaterThan(0);
            expect(after.at(-2)).toMatchObject({role: "user", status: "complete", content: "Tell me a very long story about a girl and her cat."});
        } finally {
            db.close();
        }
    });
});

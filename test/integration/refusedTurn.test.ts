import {describe, expect, it} from "vitest";
import {connectCoreClient, createInProcessChannelPair} from "../../src/core/common/rpc/index.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {decryptedRows} from "../helpers/decryptedRows.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore} from "../helpers/tempCore.js";

const modelPath = requireTestModel();
/** A word no reply or setting holds: wherever it shows up, the refused prompt put it there. */
const marker = "Quetzalmarble";
const tooLong = `${marker} `.repeat(120).trim();

/**
 * A turn refused before anything is evaluated (CONTEXT_OVERFLOW) writes nothing: no conversation,
 * no title made of its words, no message. What the user typed stays in the composer's draft only.
 */
describe.skipIf(modelPath == null)("a refused turn writes nothing", () => {
    it("chat --prompt too long for the context: CONTEXT_OVERFLOW, and afterwards no conversation and no word of the prompt in the database", async () => {
        const {env, db} = hermeticCliEnv("refused-turn");
        const chat = ["chat", "--model", modelPath!, "--db", db, "--context-size", "256", "--threads", "1", "--max-tokens", "16", "--prompt", tooLong];
        const runs = [
            await runCliCapturing([...chat, "--json"], {env}),
            await runCliCapturing([...chat, "--conversation", "fresh-notes"], {env})
        ];
        expect(runs.map((run) => run.code)).toEqual([1, 1]);
        expect(JSON.parse(runs[0]!.stderr)).toMatchObject({error: {code: "CONTEXT_OVERFLOW", details: {contextSize: 256, replyBudget: 16}}});
        expect(runs[1]!.stderr).toMatch(/\[CONTEXT_OVERFLOW\]/);
        expect(runs.map((run) => run.stdout)).toEqual(["", ""]);

        const listed = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(listed.code).toBe(0);
        expect(JSON.parse(listed.stdout)).toMatchObject({conversations: []});
        const rows = decryptedRows(db);
        expect(rows.find((table) => table.table === "conversations")?.json).toBe("[]");
        expect(rows.find((table) => table.table === "messages")?.json).toBe("[]");
        expect(rows.filter((table) => table.json.includes(marker)).map((table) => table.table)).toEqual([]);
        // The refusals are in the audit log, with sizes and no conversation.
        const refusals = (JSON.parse(rows.find((table) => table.table === "audit_events")!.json) as Array<{kind: string, conversation_id: string | null}>)
            .filter((event) => event.kind === "turn.refused");
        expect(refusals.map((event) => event.conversation_id)).toEqual([null, null]);
    });

    it("over RPC, in an existing conversation: the title, the messages and the conversation are unchanged; the draft holds what was typed", async () => {
        const {core} = await createTestCore(modelPath!, {contextSize: 256});
        const service = createCoreService(core);
        const [coreSide, clientSide, closeChannel] = createInProcessChannelPair();
        serveCoreOverChannel(service, coreSide);
        const client = connectCoreClient(clientSide);
        try {
            const {id: conversationId} = await client.call("conversations.create", {title: "Fox stories"});
            await core.sendMessage({conversationId, text: "Once upon a time, a little fox", maxTokens: 8, temperature: 0});
            const before = await client.call("conversations.get", {conversationId});
            expect(before.messages).toHaveLength(2);

            await client.call("conversations.saveDraft", {conversationId, text: tooLong}); // as the composer saves it while the user types
            await expect(client.call("chat.send", {conversationId, text: tooLong, maxTokens: 16})).rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});

            const after = await client.call("conversations.get", {conversationId});
            expect(after.conversation).toEqual(before.conversation);
            expect(after.messages).toEqual(before.messages);
            expect(after.draft).toBe(tooLong);
            expect((await client.call("conversations.list", {})).map((conversation) => [conversation.title, conversation.messageCount])).toEqual([["Fox stories", 2]]);
            expect(core.auditEvents({conversationId, kinds: ["turn.refused"]})).toHaveLength(1);
        } finally {
            client.close();
            closeChannel();
            service.dispose();
            await core.dispose();
        }
    });
});

import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import type {CloudTurnResult} from "../../src/core/common/types.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {secretVectors} from "../helpers/secretCorpus.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const vectors = secretVectors(24);
const awsKey = vectors.find((vector) => vector.kind === "aws-access-key")!.value;
const iban = vectors.find((vector) => vector.kind === "iban")!.value;
const card = vectors.find((vector) => vector.label === "Mastercard test number")!.value;
const jwt = vectors.find((vector) => vector.kind === "jwt")!.value;

/** Every 8-character run of the value, and its JSON-escaped form: what "no byte of it" is checked with. */
function fragmentsOf(value: string) {
    const runs = new Set<string>([JSON.stringify(value).slice(1, -1)]);
    for (let at = 0; at + 8 <= value.length; at++)
        runs.add(value.slice(at, at + 8));
    return [...runs];
}

function expectNoByteOf(values: string[], texts: string[]) {
    const haystack = texts.join("\n");
    for (const value of values)
        for (const fragment of fragmentsOf(value))
            expect(haystack.includes(fragment), `"${fragment.slice(0, 3)}…" of a secret was found`).toBe(false);
}

describe("cloud turns are scanned for secrets before anything is sent (simulator)", () => {
    const cleanups: Array<() => Promise<unknown>> = [];
    afterEach(async () => {
        await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
    });

    async function setUp(reply: "generate" | "echo" = "generate", {local = false} = {}) {
        const sim = await SharedCloudSimulator.start({mode: "honest", reply});
        const core = openTestCore(() => loadLlama(), {
            database: path.join(tempDir("cloud-secret-scan"), "c.db"),
            engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}},
            cloud: {apiKey: () => "tenant-a", clientOptions: {timeoutMs: 5000, retries: 0}}
        });
        cleanups.push(() => core.dispose(), () => sim.close());
        core.setCloudSettings({endpoint: sim.url, model: sim.modelName, fallback: true, contextLimit: null});
        if (local)
            await core.loadModel(modelPath!);
        return {sim, core};
    }

    it("a secret in the prompt, the history or the system prompt stops the turn: the server receives no request at all, nothing is stored, the audit keeps kinds and counts", async () => {
        const {sim, core} = await setUp();
        const conversation = core.createConversation({policy: "cloud-allowed", settings: {systemPrompt: `Bill everything to ${iban}.`}});
        servicesOf(core).store.appendMessage(conversation.id, {role: "user", status: "complete", content: `my old token was ${jwt}`});
        servicesOf(core).store.appendMessage(conversation.id, {role: "assistant", status: "complete", content: "Noted."});
        const before = core.getConversation(conversation.id).messages;

        const error = await core.sendMessage({
            conversationId: conversation.id, route: "cloud", maxTokens: 16,
            text: `Why does this fail?\naws configure set aws_access_key_id ${awsKey}\nand card ${card}`
        }).then(() => null, (caught: unknown) => caught as {code: string, message: string, details: {findings: Array<Record<string, unknown>>}});

        expect(error?.code).toBe("SECRET_IN_CLOUD_REQUEST");
        expect(error!.details.findings.map(({kind, where, line}) => `${String(kind)} @ ${String(where)}:${String(line)}`)).toEqual([
            "IBAN @ the system prompt:1",
            "JSON Web Token @ history message 1:1",
            "AWS access key @ the prompt:2",
            "payment card number @ the prompt:3"
        ]);
        expect(sim.received).toEqual([]); // not the chat request, not even /tokenize or /v1/models
        expect(core.getConversation(conversation.id).messages).toEqual(before);
        const audit = core.auditEvents({conversationId: conversation.id});
        expect(audit.filter((event) => event.kind.startsWith("cloud."))).toEqual([expect.objectContaining({
            kind: "cloud.secrets.blocked",
            data: {requestId: expect.any(String), count: 4, kinds: {"IBAN": 1, "JSON Web Token": 1, "AWS access key": 1, "payment card number": 1}}
        })]);
        expectNoByteOf([awsKey, card, jwt, iban], [JSON.stringify(error), JSON.stringify(audit), String((error as unknown as Error).stack)]);
    });

    it("redacted: the server receives the typed placeholders and no byte of the values; the reply shown and stored has the values back", async () => {
        const {sim, core} = await setUp("echo");
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const text = `Check my transfer from ${iban} paid with ${card}; the key ${awsKey} is old.`;
        let shown = "";
        const result = await core.sendMessage({conversationId: conversation.id, route: "cloud", maxTokens: 64, text, secrets: {redact: true}},
            {onText: (piece) => (shown += piece)});

        const bodies = sim.received.map((request) => request.body);
        expect(sim.received.map((request) => request.path)).toContain("/v1/chat/completions");
        expectNoByteOf([iban, card, awsKey], bodies);
        const chat = JSON.parse(sim.received.find((request) => request.path === "/v1/chat/completions")!.body) as {messages: Array<{content: string}>};
        expect(chat.messages.at(-1)!.content).toContain(
            "Check my transfer from [IBAN 1] paid with [payment card number 1]; the key [AWS access key 1] is old.");

        expect(result).toMatchObject({route: "cloud", status: "complete", cloud: {blocked: false}});
        expect(shown).toContain(`You said: ${text}`);
        expect(result.reply).toBe(shown);
        expect((result as CloudTurnResult).cloud.secrets.redacted.map((finding) => finding.kind)).toEqual(["IBAN", "payment card number", "AWS access key"]);
        expect(core.getConversation(conversation.id).messages.map((message) => message.content)).toEqual([text, shown]);
        expect(core.auditEvents({conversationId: conversation.id, kinds: ["cloud.secrets.redacted"]})).toEqual([expect.objectContaining({
            data: {requestId: expect.any(String), count: 3, kinds: {"IBAN": 1, "payment card number": 1, "AWS access key": 1}}
        })]);
        expectNoByteOf([iban, card, awsKey], [JSON.stringify(core.auditEvents({conversationId: conversation.id}))]);
    });

    it("an allowed kind goes as it is (the control: the scan is what keeps the others back), and is recorded by kind", async () => {
        const {sim, core} = await setUp();
        const conversation = core.createConversation({policy: "cloud-allowed"});
        await core.sendMessage({conversationId: conversation.id, route: "cloud", maxTokens: 8, text: `token ${jwt}`, secrets: {allow: ["jwt"]}});
        expect(sim.received.some((request) => request.body.includes(jwt))).toBe(true);
        expect(core.auditEvents({conversationId: conversation.id, kinds: ["cloud.secrets.allowed"]})).toEqual([expect.objectContaining({
            data: {requestId: expect.any(String), count: 1, kinds: {"JSON Web Token": 1}}
        })]);
    });

    it("over the API: `secrets` is validated at the door, a refused turn keeps the typed text as the draft, the Never send list comes from the settings", async () => {
        const {sim, core} = await setUp();
        const service = createCoreService(core);
        cleanups.push(async () => service.dispose());
        const settings = await service.call("settings.set", {cloudNeverSend: ["Project Falcon"]});
        expect(settings).toMatchObject({ok: true, value: {cloud: {neverSend: ["Project Falcon"]}}});
        const conversation = await service.call("conversations.create", {policy: "cloud-allowed"});
        const conversationId = (conversation as {value: {id: string}}).value.id;

        const invalid = await service.call("chat.send", {conversationId, text: "hi", route: "cloud", secrets: {allow: ["no-such-kind"]}});
        expect(invalid).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});
        const text = "What is the budget of PROJECT   falcon this year?";
        const refused = await service.call("chat.send", {conversationId, text, route: "cloud"});
        expect(refused).toMatchObject({ok: false, error: {code: "SECRET_IN_CLOUD_REQUEST", details: {
            count: 1, findings: [{kind: "never-send phrase", where: "the prompt", line: 1, preview: "••••••••"}]
        }}});
        expect(sim.received).toEqual([]);
        expect(core.draftOf(conversationId)).toBe(text);
        expect(core.getConversation(conversationId).messages).toEqual([]);
    });

    it.skipIf(modelPath == null)("local turns are never scanned or changed", async () => {
        const {sim, core} = await setUp("generate", {local: true});
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const text = `Once upon a time ${awsKey} and ${card}`;
        const result = await core.sendMessage({conversationId: conversation.id, route: "local", maxTokens: 8, text});
        expect(result.route).toBe("local");
        expect(core.getConversation(conversation.id).messages[0]!.content).toBe(text);
        expect(core.auditEvents({conversationId: conversation.id}).filter((event) => event.kind.startsWith("cloud."))).toEqual([]);
        expect(sim.received).toEqual([]);
    });
});

import fs from "node:fs";
import http from "node:http";
import type {AddressInfo} from "node:net";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {maxPassagesPerTurn} from "../../src/core/node/documents/planDocumentTurn.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {testFingerprintKey} from "../helpers/cloudFixtures.js";
import {longText, textPdf} from "../helpers/documentFixtures.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {decryptedRows} from "../helpers/decryptedRows.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

/** An OpenAI-compatible endpoint that streams `reply` to every chat request and keeps each request's body. */
async function fakeCloud(reply: string) {
    const requests: string[] = [];
    const server = http.createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        request.on("end", () => {
            if (!request.url!.endsWith("/chat/completions")) {
                response.writeHead(404).end();
                return;
            }
            requests.push(body);
            const chunk = (delta: Record<string, string>, finish: string | null) => `data: ${JSON.stringify({
                id: "fake", object: "chat.completion.chunk", created: 0, model: "fake", choices: [{index: 0, delta, finish_reason: finish}]
            })}\n\n`;
            response.writeHead(200, {"content-type": "text/event-stream"});
            response.end(chunk({role: "assistant", content: reply}, null) + chunk({}, "stop") + "data: [DONE]\n\n");
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        requests,
        close: () => new Promise<void>((resolve) => server.close(() => resolve()))
    };
}

function writeDocument(dir: string, name: string, text: string | Uint8Array): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
}

type ChatJson = {
    conversationId: string,
    tokens: {prompt: number},
    attachments: Array<{name: string, bytes: number, pages: number, tokens: number, mode: "whole" | "retrieved", passages: Array<{page: number, chars: number}>}>,
    retrieved?: Array<{name: string, page: number, startLine: number, endLine: number, chars: number}>
};

describe.skipIf(modelPath == null)("chat --attach (real CLI, real model, real store)", () => {
    const documents = tempDir("documents-source");
    const {env, db} = hermeticCliEnv("documents-cli");
    const chat = (...args: string[]) => runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--threads", "1", "--max-tokens", "8",
        "--temperature", "0", "--json", ...args], {env});

    it("a document that fits goes in whole: --json lists it, tokens.prompt counts it, conversations show lists it, search finds a word inside it", async () => {
        const note = writeDocument(documents, "note.txt", "The lantern is kept in the Zanzibarite cupboard.\nSecond line.\n");
        const withDocument = await chat("--conversation", "whole-1", "--attach", note, "--prompt", "Where is the lantern?");
        expect(withDocument.code, withDocument.stderr).toBe(0);
        const result = JSON.parse(withDocument.stdout) as ChatJson;
        expect(result.attachments).toEqual([{
            name: "note.txt", bytes: fs.statSync(note).size, pages: 1, tokens: expect.any(Number), mode: "whole", passages: [{page: 1, chars: 62}]
        }]);
        const without = JSON.parse((await chat("--conversation", "whole-2", "--prompt", "Where is the lantern?")).stdout) as ChatJson;
        expect(without.attachments).toEqual([]);
        expect(result.tokens.prompt - without.tokens.prompt, "the prompt holds the document").toBeGreaterThanOrEqual(result.attachments[0]!.tokens);

        const shown = await runCliCapturing(["conversations", "show", "whole-1", "--db", db, "--json"], {env});
        const {messages} = JSON.parse(shown.stdout) as {messages: Array<{role: string, content: string, attachments?: Array<Record<string, unknown>>}>};
        expect(messages.map((message) => [message.role, message.content, message.attachments?.map((attachment) => [attachment.name, attachment.mode, attachment.pages])]))
            .toEqual([["user", "Where is the lantern?", [["note.txt", "whole", 1]]], ["assistant", expect.any(String), undefined]]);

        const found = await runCliCapturing(["conversations", "search", "Zanzibarite", "--db", db, "--json"], {env});
        expect((JSON.parse(found.stdout) as {hits: Array<{conversation: {id: string}, snippet: string}>}).hits.map((hit) => [hit.conversation.id, hit.snippet]))
            .toEqual([["whole-1", expect.stringContaining("[Zanzibarite]")]]);
    });

    it("a larger one is chunked and retrieved: the chunk with the words asked about is given, and again in a later turn", async () => {
        const big = writeDocument(documents, "manual.txt", longText(600, "The reactor override phrase is marmalade seventeen.", 420));
        const first = await chat("--conversation", "big-1", "--attach", big, "--prompt", "What is the reactor override phrase?");
        expect(first.code, first.stderr).toBe(0);
        const [attachment] = (JSON.parse(first.stdout) as ChatJson).attachments;
        expect(attachment).toMatchObject({name: "manual.txt", pages: 1, mode: "retrieved"});
        expect(attachment!.passages.length).toBeGreaterThan(0);

        const later = await chat("--conversation", "big-1", "--prompt", "Tell me the reactor override phrase once more");
        expect(later.code, later.stderr).toBe(0);
        const laterResult = JSON.parse(later.stdout) as ChatJson;
        expect(laterResult.attachments).toEqual([]);
        const best = laterResult.retrieved![0]!;
        expect(best).toMatchObject({name: "manual.txt", page: 1});
        expect(best.startLine <= 420 && 420 <= best.endLine, `lines ${best.startLine}-${best.endLine} hold line 420`).toBe(true);
    });

    it("a long PDF (made by the test) is retrieved from, and the passage given first is the page that holds the sentence asked about", async () => {
        const report = writeDocument(documents, "report.pdf", await textPdf(40, {27: "The audit found the OSPREYLEDGER account."}));
        const run = await chat("--context-size", "512", "--conversation", "pdf-1", "--attach", report, "--prompt", "Which account did the audit find? OSPREYLEDGER");
        expect(run.code, run.stderr).toBe(0);
        const [attachment] = (JSON.parse(run.stdout) as ChatJson).attachments;
        expect(attachment).toMatchObject({name: "report.pdf", pages: 40, mode: "retrieved"});
        expect(attachment!.passages[0]!.page).toBe(27);
    });

    it("two attachments with the same name keep their own passages: each lists pages of its own document only", async () => {
        const first = writeDocument(fs.mkdtempSync(path.join(documents, "a-")), "report.pdf", await textPdf(40, {27: "The audit found the OSPREYLEDGER account."}));
        const second = writeDocument(fs.mkdtempSync(path.join(documents, "b-")), "report.pdf", await textPdf(60, {52: "The audit found the OSPREYLEDGER account too."}));
        const run = await chat("--context-size", "512", "--conversation", "same-name-1", "--attach", first, "--attach", second,
            "--prompt", "Which account did the audit find? OSPREYLEDGER");
        expect(run.code, run.stderr).toBe(0);
        const attachments = (JSON.parse(run.stdout) as ChatJson).attachments;
        expect(attachments.map((attachment) => [attachment.name, attachment.pages, attachment.mode]))
            .toEqual([["report.pdf", 40, "retrieved"], ["report.pdf", 60, "retrieved"]]);
        const [fromFirst, fromSecond] = attachments.map((attachment) => attachment.passages.map((passage) => passage.page));
        expect(fromFirst, "the 40-page report's sentence is on its page 27").toContain(27);
        expect(fromSecond, "the 60-page report's sentence is on its page 52").toContain(52);
        expect(fromFirst!.every((page) => page <= 40), `the 40-page report cites pages ${fromFirst!.join(", ")}`).toBe(true);
        expect(fromFirst!.length + fromSecond!.length, "each passage given is reported once").toBeLessThanOrEqual(maxPassagesPerTurn);
    });

    it("/attach in interactive chat: the document goes with the next message only, and the CLI says how it was given", async () => {
        const note = writeDocument(documents, "recipe.txt", "Add two spoons of QUINCEPOWDER.");
        const run = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--threads", "1", "--max-tokens", "4", "--temperature", "0",
            "--conversation", "interactive-1"], {env, input: `/attach ${note}\nWhat goes in?\nAnd then?\n/quit\n`});
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toContain("Attached recipe.txt (1 page, 31 bytes");
        const {messages} = JSON.parse((await runCliCapturing(["conversations", "show", "interactive-1", "--db", db, "--json"], {env})).stdout) as
            {messages: Array<{role: string, content: string, attachments?: Array<{name: string}>}>};
        expect(messages.filter((message) => message.role === "user").map((message) => [message.content, message.attachments?.map((attachment) => attachment.name)]))
            .toEqual([["What goes in?", ["recipe.txt"]], ["And then?", undefined]]);
    });

    it("an unreadable attachment: exit 1, ATTACHMENT_UNREADABLE with its reason; no conversation created, no message added", async () => {
        const binary = writeDocument(documents, "photo.txt", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 0x49, 0x48]));
        const note = writeDocument(documents, "ok.txt", "A readable note.");
        const fresh = await chat("--conversation", "never-made", "--attach", note, "--attach", binary, "--prompt", "Describe the photo");
        expect(fresh.code).toBe(1);
        expect(fresh.stdout).toBe("");
        expect(JSON.parse(fresh.stderr)).toMatchObject({error: {code: "ATTACHMENT_UNREADABLE", details: {name: "photo.txt", reason: "binary"}}});

        const before = (await runCliCapturing(["conversations", "show", "whole-2", "--db", db, "--json"], {env})).stdout;
        const missing = await chat("--conversation", "whole-2", "--attach", path.join(documents, "no-such-file.txt"), "--prompt", "And this one?");
        expect(missing.code).toBe(1);
        expect(JSON.parse(missing.stderr)).toMatchObject({error: {code: "ATTACHMENT_UNREADABLE", details: {reason: "not-a-file"}}});
        expect((await runCliCapturing(["conversations", "show", "whole-2", "--db", db, "--json"], {env})).stdout).toBe(before);

        const listed = JSON.parse((await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env})).stdout) as {conversations: Array<{id: string}>};
        expect(listed.conversations.map((conversation) => conversation.id)).not.toContain("never-made");
        expect(decryptedRows(db).filter((table) => table.json.includes("A readable note")).map((table) => table.table)).toEqual([]);
    });
});

describe.skipIf(modelPath == null)("documents stay in their conversation (core, real model)", () => {
    let core: Core;
    let database: string;
    const documents = tempDir("documents-isolation");
    beforeAll(async () => {
        ({core, database} = await createTestCore(modelPath!, {contextSize: 1024}, {cloud: {apiKey: () => "test-key", fingerprintKey: () => testFingerprintKey}}));
    });
    afterAll(async () => {
        await core?.dispose();
    });

    it("retrieval never reads another conversation's chunks: two conversations, the same words, each gets its own document's passages", async () => {
        const alpha = writeDocument(documents, "alpha.txt", longText(400, "The vault code is ALPHAQUOKKA.", 150, 2));
        const bravo = writeDocument(documents, "bravo.txt", longText(400, "The vault code is BRAVOWOMBAT.", 300, 3));
        const a = asLocalTurn(await core.startConversation({title: "A"}, {text: "What is the vault code?", attachments: [{kind: "path", path: alpha}], maxTokens: 8, temperature: 0}));
        const b = asLocalTurn(await core.startConversation({title: "B"}, {text: "What is the vault code?", attachments: [{kind: "path", path: bravo}], maxTokens: 8, temperature: 0}));
        expect([a.attachments![0]!.mode, b.attachments![0]!.mode]).toEqual(["retrieved", "retrieved"]);

        const laterB = asLocalTurn(await core.sendMessage({conversationId: b.conversationId, text: "the vault code", maxTokens: 8, temperature: 0}));
        expect(laterB.retrieved!.length).toBeGreaterThan(0);
        expect(new Set(laterB.retrieved!.map((passage) => passage.name))).toEqual(new Set(["bravo.txt"]));

        // The store's query itself: the same words in both conversations' chunks, and B's retrieval holds none of A's text.
        const {attachments} = servicesOf(core);
        const fromB = attachments.retrieve(b.conversationId, "vault code ALPHAQUOKKA BRAVOWOMBAT");
        expect(fromB.length).toBeGreaterThan(0);
        expect(fromB.some((passage) => passage.text.includes("BRAVOWOMBAT"))).toBe(true);
        expect(fromB.filter((passage) => passage.text.includes("ALPHAQUOKKA") || passage.name !== "bravo.txt")).toEqual([]);
        const fromA = attachments.retrieve(a.conversationId, "vault code ALPHAQUOKKA BRAVOWOMBAT");
        expect(fromA.filter((passage) => passage.text.includes("BRAVOWOMBAT") || passage.name !== "alpha.txt")).toEqual([]);
        // Control: the words are in both conversations' chunks in the one index.
        const db = servicesOf(core).database;
        const holders = db.prepare(`SELECT DISTINCT c.conversation_id AS id FROM attachment_chunks_fts f JOIN attachment_chunks c ON c.id = f.rowid
            WHERE attachment_chunks_fts MATCH '"vault" "code"'`).all() as Array<{id: string}>;
        expect(holders.map((row) => row.id).sort()).toEqual([a.conversationId, b.conversationId].sort());
    });

    it("a retrieved passage says its page: a many-page document's sentence is cited on its page", () => {
        const {attachments, store} = servicesOf(core);
        const conversation = core.createConversation({title: "Pages"});
        const {user} = store.appendTurn(conversation.id, "read this", {route: "local", routeReason: "test"});
        const pages = Array.from({length: 12}, (_, index) => ({page: index + 1, text: longText(30, index === 8 ? "Page nine names the PELICANORCHID." : "an ordinary line", 7, index + 5)}));
        attachments.add(conversation.id, user.id, {document: {name: "report.pdf", format: "pdf", bytes: 40_000, pages}, tokens: 9000, mode: "retrieved"});
        const [best] = attachments.retrieve(conversation.id, "Which page names the pelicanorchid?");
        expect(best).toMatchObject({name: "report.pdf", page: 9});
        expect(best!.text).toContain("PELICANORCHID");
    });

    it("an incognito conversation's documents live only in memory: nothing of them in the database file", async () => {
        const secretDocument = writeDocument(documents, "incognito.txt", "The incognito word is GLASSFLAMINGO.");
        const turn = asLocalTurn(await core.startConversation({title: "Private", incognito: true},
            {text: "What is the word?", attachments: [{kind: "path", path: secretDocument}], maxTokens: 8, temperature: 0}));
        expect(turn.attachments![0]!.mode).toBe("whole");
        expect(core.getConversation(turn.conversationId).messages[0]!.attachments!.map((attachment) => attachment.name)).toEqual(["incognito.txt"]);
        expect(servicesOf(core).incognito.attachments.ofConversation(turn.conversationId).map((attachment) => attachment.text)).toEqual(["The incognito word is GLASSFLAMINGO."]);
        servicesOf(core).database.pragma("wal_checkpoint(TRUNCATE)");
        expect(decryptedRows(database).filter((table) => table.json.includes("GLASSFLAMINGO")).map((table) => table.table)).toEqual([]);
    });

    it("over RPC: chat.send attaches by path in the desktop app (conversations.get lists it), and web mode refuses a path", async () => {
        const contract = writeDocument(documents, "terms.txt", "Payment is due within thirty days.");
        const {id: conversationId} = core.createConversation({title: "RPC"});
        const desktop = createCoreService(core, {attachByPath: true});
        const web = createCoreService(core);
        try {
            const refused = await web.call("chat.send", {conversationId, text: "Summarize", maxTokens: 8, attachments: [{path: contract}]});
            expect(refused).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});
            expect(core.getConversation(conversationId).messages).toEqual([]);

            const sent = await desktop.call("chat.send", {conversationId, text: "Summarize", maxTokens: 8, attachments: [{path: contract}]});
            expect(sent.ok, JSON.stringify(sent)).toBe(true);
            await expect.poll(async () => {
                const got = await desktop.call("conversations.get", {conversationId});
                return got.ok ? (got.value as {generating: boolean}).generating : true;
            }).toBe(false);
            const got = await desktop.call("conversations.get", {conversationId});
            const {messages} = (got as {ok: true, value: {messages: Array<{role: string, attachments?: Array<{name: string, mode: string, bytes: number}>}>}}).value;
            expect(messages[0]!.attachments).toEqual([expect.objectContaining({name: "terms.txt", mode: "whole", bytes: fs.statSync(contract).size})]);
        } finally {
            desktop.dispose();
            web.dispose();
        }
    });

    it("regenerate keeps the prompt's document: asked again with it, and put back with it when the new turn is refused", async () => {
        const recipe = writeDocument(documents, "menu.txt", "Tonight: PLUMSOUFFLE with cream.");
        const {id: conversationId} = core.createConversation({title: "Regenerate"});
        await core.sendMessage({conversationId, text: "What is tonight?", attachments: [{kind: "path", path: recipe}], maxTokens: 8, temperature: 0});
        const service = createCoreService(core);
        const settled = () => expect.poll(async () => {
            const got = await service.call("conversations.get", {conversationId});
            return got.ok ? (got.value as {generating: boolean}).generating : true;
        }).toBe(false);
        const userAttachments = () => core.getConversation(conversationId).messages.filter((message) => message.role === "user")
            .map((message) => message.attachments?.map((attachment) => attachment.name));
        try {
            expect(await service.call("chat.regenerate", {conversationId, maxTokens: 8})).toMatchObject({ok: true});
            await settled();
            expect(userAttachments()).toEqual([["menu.txt"]]);
            expect(core.auditEvents({conversationId, kinds: ["turn.documents"]}).at(-1)?.data).toMatchObject({attached: 1, whole: 1});

            // Refused before it starts (a reply budget the context cannot hold): the prompt comes back with its document.
            expect(await service.call("chat.regenerate", {conversationId, maxTokens: 4000})).toMatchObject({ok: false, error: {code: "CONTEXT_OVERFLOW"}});
            expect(userAttachments()).toEqual([["menu.txt"]]);
            expect(core.searchConversations("PLUMSOUFFLE").map((hit) => hit.conversation.id)).toEqual([conversationId]);
        } finally {
            service.dispose();
        }
    });

    it("edit and resend keeps the prompt's documents: the edited prompt is asked with them, and the older version keeps its own", async () => {
        const recipe = writeDocument(documents, "pantry.txt", "The pantry holds QUINCEJAM and oats.");
        const {id: conversationId} = core.createConversation({title: "Edit"});
        await core.sendMessage({conversationId, text: "What is in the pantry?", attachments: [{kind: "path", path: recipe}], maxTokens: 8, temperature: 0});
        const service = createCoreService(core);
        try {
            const firstPrompt = core.getConversation(conversationId).messages.find((message) => message.role === "user")!;
            expect(await service.call("chat.editAndResend", {conversationId, messageId: firstPrompt.id, text: "List the pantry.", maxTokens: 8})).toMatchObject({ok: true});
            await expect.poll(async () => {
                const got = await service.call("conversations.get", {conversationId});
                return got.ok ? (got.value as {generating: boolean}).generating : true;
            }).toBe(false);
            const prompts = core.getConversation(conversationId).messages.filter((message) => message.role === "user");
            expect(prompts.map((message) => [message.content, message.attachments?.map((attachment) => attachment.name)]))
                .toEqual([["List the pantry.", ["pantry.txt"]]]);
            expect(core.auditEvents({conversationId, kinds: ["turn.documents"]}).at(-1)?.data).toMatchObject({attached: 1, whole: 1});
            expect(core.documentsOfMessage(conversationId, firstPrompt.id).map((document) => document.name)).toEqual(["pantry.txt"]);
        } finally {
            service.dispose();
        }
    });

    it("export and import carry a conversation's documents: the imported copy lists them, retrieves from them, and search finds their words", async () => {
        const big = writeDocument(documents, "handbook.txt", longText(400, "The fire exit is behind the TANGERINEHERON poster.", 200, 4));
        const turn = asLocalTurn(await core.startConversation({title: "Handbook"}, {text: "Where is the fire exit?", attachments: [{kind: "path", path: big}], maxTokens: 8, temperature: 0}));
        const {text} = core.exportConversations(turn.conversationId, "json");
        expect(core.exportConversations(turn.conversationId, "markdown").text).toContain("_Attached: handbook.txt (1 page,");
        await core.deleteConversation(turn.conversationId);
        expect(core.searchConversations("TANGERINEHERON")).toEqual([]);

        const [imported] = await core.importConversations(text);
        const {messages} = core.getConversation(imported!.id);
        expect(messages[0]!.attachments).toEqual([expect.objectContaining({name: "handbook.txt", mode: "retrieved", bytes: fs.statSync(big).size, pages: 1})]);
        expect(core.searchConversations("TANGERINEHERON").map((hit) => hit.conversation.id)).toEqual([imported!.id]);
        const later = asLocalTurn(await core.sendMessage({conversationId: imported!.id, text: "the fire exit poster", maxTokens: 8, temperature: 0}));
        expect(later.retrieved!.some((passage) => passage.name === "handbook.txt" && passage.startLine <= 200 && 200 <= passage.endLine)).toBe(true);
    });

    it("the cloud: a document is sent only with sendAttachments; a reply carrying another conversation's document text is blocked (fingerprints), and was not before that conversation held it", async () => {
        const leaked = "The merger closes on the ninth of March at a price of forty two dollars per share, and the board will announce it after the markets close on Friday evening.";
        const cloud = await fakeCloud(leaked);
        try {
            core.setCloudSettings({endpoint: cloud.url, model: "fake", fallback: true, contextLimit: 100_000});
            // The control: before any conversation holds the document, the same reply is an ordinary one.
            const before = core.createConversation({title: "Cloud before", policy: "cloud-allowed"});
            expect(await core.sendMessage({conversationId: before.id, route: "cloud", text: "Tell me a story", maxTokens: 64}))
                .toMatchObject({route: "cloud", status: "complete"});
            // Conversation A, local only, holds the document; its messages do not hold the text.
            const memo = writeDocument(documents, "memo.txt", leaked);
            const a = asLocalTurn(await core.startConversation({title: "Memo"}, {text: "Read the memo", attachments: [{kind: "path", path: memo}], maxTokens: 8, temperature: 0}));
            expect(core.getConversation(a.conversationId).messages.some((message) => message.content.includes("forty two dollars"))).toBe(false);

            const b = core.createConversation({title: "Cloud B", policy: "cloud-allowed"});
            const blocked = await core.sendMessage({conversationId: b.id, route: "cloud", text: "Tell me a story", maxTokens: 64});
            expect(blocked).toMatchObject({route: "cloud", status: "blocked", cloud: {blocked: true, verdict: {kind: "fingerprint"}}});

            const c = core.createConversation({title: "Cloud C", policy: "cloud-allowed"});
            const notes = writeDocument(documents, "notes.txt", "Bring the BLUEHERON umbrella.");
            await expect(core.sendMessage({conversationId: c.id, route: "cloud", text: "Summarize", attachments: [{kind: "path", path: notes}]}))
                .rejects.toMatchObject({code: "CLOUD_ATTACHMENTS_UNCONFIRMED"});
            expect(cloud.requests.some((body) => body.includes("BLUEHERON"))).toBe(false);
            const sent = await core.sendMessage({conversationId: c.id, route: "cloud", text: "Summarize", attachments: [{kind: "path", path: notes}], sendAttachments: true, maxTokens: 64});
            expect(sent.route).toBe("cloud");
            expect(cloud.requests.some((body) => body.includes("BLUEHERON"))).toBe(true);
            expect(core.getConversation(c.id).messages[0]!.attachments!.map((attachment) => attachment.name)).toEqual(["notes.txt"]);
        } finally {
            await cloud.close();
        }
    });

    it("a cloud turn that would send a document is refused, naming each document and its size; nothing is stored", async () => {
        core.setCloudSettings({endpoint: "http://127.0.0.1:9/v1", model: "never-reached", fallback: true});
        const contract = writeDocument(documents, "contract.txt", "Clause 1: the parties agree.");
        const conversation = core.createConversation({title: "Cloud", policy: "cloud-allowed"});
        await expect(core.sendMessage({conversationId: conversation.id, route: "cloud", text: "Summarize", attachments: [{kind: "path", path: contract}]}))
            .rejects.toMatchObject({code: "CLOUD_ATTACHMENTS_UNCONFIRMED", message: expect.stringContaining(`contract.txt (${fs.statSync(contract).size} bytes)`)});
        expect(core.getConversation(conversation.id).messages).toEqual([]);
    });
});

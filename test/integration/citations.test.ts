import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {testFingerprintKey} from "../helpers/cloudFixtures.js";
import {textPdf} from "../helpers/documentFixtures.js";
import {asLocalTurn} from "../helpers/coreServices.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();
const sentence = "The audit found the OSPREYLEDGER account.";

function writeDocument(dir: string, name: string, content: string | Uint8Array): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
}

/** The citations under the conversation's replies, in order. */
function citationsOf(core: Core, conversationId: string) {
    return core.getConversation(conversationId).messages.filter((message) => message.role === "assistant").map((message) => message.citations);
}

describe.skipIf(modelPath == null)("citations and what each document sent where (#23 items 4, 7; real model, real store)", () => {
    let core: Core;
    let sim: SharedCloudSimulator;
    const documents = tempDir("citations");
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
        ({core} = await createTestCore(modelPath!, {contextSize: 512}, {cloud: {apiKey: () => "test-key", fingerprintKey: () => testFingerprintKey}}));
    });
    afterAll(async () => {
        await core?.close();
        await sim?.close();
    });

    it("a reply given retrieved passages cites each (document, page, lines); the cited passage is read back with its text, and a later reply cites its own", async () => {
        const report = writeDocument(documents, "report.pdf", await textPdf(40, {27: sentence}));
        const turn = asLocalTurn(await core.startConversation({title: "Audit"}, {
            text: "Which account did the audit find? OSPREYLEDGER", attachments: [{kind: "path", path: report}], maxTokens: 8, temperature: 0
        }));
        expect(turn.attachments![0]).toMatchObject({name: "report.pdf", pages: 40, mode: "retrieved"});
        const [citations] = citationsOf(core, turn.conversationId);
        expect(citations!.length).toBe(turn.attachments![0]!.passages.length);
        expect(citations!.every((citation) => citation.kind === "passage" && citation.name === "report.pdf")).toBe(true);
        const first = citations![0]!;
        expect(first).toMatchObject({kind: "passage", name: "report.pdf", page: 27});
        if (first.kind !== "passage")
            throw new Error("a passage was expected");
        const passage = core.citedPassage(turn.conversationId, first.chunkId);
        expect(passage).toMatchObject({chunkId: first.chunkId, name: "report.pdf", page: 27, startLine: first.startLine, endLine: first.endLine});
        expect(passage.text).toContain(sentence);

        // A later question retrieves from the stored document: the chunks it cites are the stored ones, with their own ids.
        const later = asLocalTurn(await core.sendMessage({conversationId: turn.conversationId, text: "OSPREYLEDGER again", maxTokens: 8, temperature: 0}));
        expect(later.retrieved!.length).toBeGreaterThan(0);
        const [, laterCitations] = citationsOf(core, turn.conversationId);
        expect(laterCitations!.map((citation) => citation.kind === "passage" ? citation.page : null))
            .toEqual(later.retrieved!.map((retrieved) => retrieved.page));
        expect(laterCitations![0]).toMatchObject({kind: "passage", chunkId: first.chunkId});

        const [isolation] = core.isolationReport(turn.conversationId).documents;
        expect(isolation).toMatchObject({name: "report.pdf", pages: 40, mode: "retrieved", bytes: fs.statSync(report).size,
            local: {repliesGivenWhole: 0, passagesGiven: citations!.length + laterCitations!.length, repliesGivenPassages: 2}, cloud: []});
    });

    it("over RPC, documents.passage reads only the asking conversation's chunks: another conversation's chunk id is PASSAGE_NOT_FOUND, bad input INVALID_INPUT", async () => {
        const secret = writeDocument(documents, "secret.pdf", await textPdf(40, {12: "The vault opens with KESTRELCIPHER."}));
        const owner = asLocalTurn(await core.startConversation({title: "Owner"}, {
            text: "How does the vault open? KESTRELCIPHER", attachments: [{kind: "path", path: secret}], maxTokens: 8, temperature: 0
        }));
        const cited = citationsOf(core, owner.conversationId)[0]![0]!;
        if (cited.kind !== "passage")
            throw new Error("a passage was expected");
        const other = core.createConversation({title: "Other"});
        const service = createCoreService(core);
        try {
            const own = await service.call("documents.passage", {conversationId: owner.conversationId, chunkId: cited.chunkId});
            expect(own).toMatchObject({ok: true, value: {page: 12, text: expect.stringContaining("KESTRELCIPHER")}});

            const refused = await service.call("documents.passage", {conversationId: other.id, chunkId: cited.chunkId});
            expect(refused).toMatchObject({ok: false, error: {code: "PASSAGE_NOT_FOUND", message: `Conversation ${other.id} holds no passage with id ${cited.chunkId}.`}});
            expect(JSON.stringify(refused)).not.toContain("KESTRELCIPHER");
            const wholeRefused = await service.call("documents.document", {conversationId: other.id, attachmentId: cited.attachmentId});
            expect(wholeRefused).toMatchObject({ok: false, error: {code: "PASSAGE_NOT_FOUND"}});
            expect(await service.call("documents.passage", {conversationId: owner.conversationId, chunkId: 0})).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});
            expect(await service.call("documents.passage", {conversationId: "no-such-conversation", chunkId: cited.chunkId}))
                .toMatchObject({ok: false, error: {code: "CONVERSATION_NOT_FOUND"}});
        } finally {
            service.dispose();
        }
    });

    it("a document given whole is cited as a whole document under its reply (opened page by page); later replies are given it again, uncited, and the panel counts them", async () => {
        const note = writeDocument(documents, "note.txt", "Bring the BLUEHERON umbrella.");
        const turn = asLocalTurn(await core.startConversation({title: "Note"}, {text: "What to bring?", attachments: [{kind: "path", path: note}], maxTokens: 8, temperature: 0}));
        await core.sendMessage({conversationId: turn.conversationId, text: "And then?", maxTokens: 8, temperature: 0});
        const [first, second] = citationsOf(core, turn.conversationId);
        expect(first).toEqual([{kind: "document", attachmentId: expect.any(Number), name: "note.txt", pages: 1}]);
        expect(second).toBeUndefined();
        expect(core.citedDocument(turn.conversationId, first![0]!.attachmentId)).toEqual({
            attachmentId: first![0]!.attachmentId, name: "note.txt", pages: [{page: 1, text: "Bring the BLUEHERON umbrella."}]
        });
        expect(core.isolationReport(turn.conversationId).documents).toEqual([expect.objectContaining({
            name: "note.txt", mode: "whole", pages: 1, local: {repliesGivenWhole: 2, passagesGiven: 0, repliesGivenPassages: 0}, cloud: []
        })]);
    });

    it("a cloud turn's documents are listed as sent to the cloud (endpoint host, when), each time a request carried them", async () => {
        core.setCloudSettings({endpoint: sim.url, model: sim.modelName, fallback: true, contextLimit: 100_000});
        const conversation = core.createConversation({title: "Cloud", policy: "cloud-allowed"});
        const terms = writeDocument(documents, "terms.txt", "Payment is due within thirty days.");
        const before = Date.now();
        const sent = await core.sendMessage({conversationId: conversation.id, route: "cloud", text: "Summarize", attachments: [{kind: "path", path: terms}],
            sendAttachments: true, maxTokens: 16});
        expect(sent).toMatchObject({route: "cloud", status: "complete"});
        await core.sendMessage({conversationId: conversation.id, route: "cloud", text: "Again", sendAttachments: true, maxTokens: 16});
        const host = new URL(sim.url).host;
        const [document] = core.isolationReport(conversation.id).documents;
        expect(document).toMatchObject({name: "terms.txt", mode: "whole", local: {repliesGivenWhole: 0, passagesGiven: 0, repliesGivenPassages: 0}});
        expect(document!.cloud).toEqual([{endpointHost: host, at: expect.any(Number)}, {endpointHost: host, at: expect.any(Number)}]);
        expect(document!.cloud[0]!.at).toBeGreaterThanOrEqual(before);
        expect(citationsOf(core, conversation.id)).toEqual([[{kind: "document", attachmentId: document!.attachmentId, name: "terms.txt", pages: 1}], undefined]);
    });
});

import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {testFingerprintKey} from "../helpers/cloudFixtures.js";
import {textPdf} from "../helpers/documentFixtures.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
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

/** The first citation under a reply, which must be a passage. */
function firstPassageCited(core: Core, conversationId: string) {
    const cited = citationsOf(core, conversationId)[0]![0]!;
    if (cited.kind !== "passage")
        throw new Error(`a passage was expected, not ${JSON.stringify(cited)}`);
    return cited;
}

describe.skipIf(modelPath == null)("citations and what each document sent where (#23 items 4, 7; real model, real store)", () => {
    let core: Core;
    let sim: SharedCloudSimulator;
    const documents = tempDir("citations");
    /** A new conversation whose first turn brings a 40-page PDF with `sentence` on page `page`, and asks `question` about it. */
    const askAboutPdf = async (name: string, page: number, sentence: string, question: string) => {
        const pdf = writeDocument(documents, name, await textPdf(40, {[page]: sentence}));
        return asLocalTurn(await core.startConversation({title: name}, {text: question, attachments: [{kind: "path", path: pdf}], maxTokens: 8, temperature: 0}));
    };
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "honest", reply: "echo"});
        ({core} = await createTestCore(modelPath!, {contextSize: 512}, {cloud: {apiKey: () => "test-key", fingerprintKey: () => testFingerprintKey}}));
    });
    afterAll(async () => {
        await core?.dispose();
        await sim?.close();
    });

    it("a reply given retrieved passages cites each (document, page, lines); the cited passage is read back with its text, and a later reply cites its own", async () => {
        const turn = await askAboutPdf("report.pdf", 27, sentence, "Which account did the audit find? OSPREYLEDGER");
        expect(turn.attachments![0]).toMatchObject({name: "report.pdf", pages: 40, mode: "retrieved"});
        const [citations] = citationsOf(core, turn.conversationId);
        expect(citations!.length).toBe(turn.attachments![0]!.passages.length);
        expect(citations!.every((citation) => citation.kind === "passage" && citation.name === "report.pdf")).toBe(true);
        const first = firstPassageCited(core, turn.conversationId);
        expect(first).toMatchObject({kind: "passage", name: "report.pdf", page: 27});
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
        expect(isolation).toMatchObject({name: "report.pdf", pages: 40, mode: "retrieved", bytes: fs.statSync(path.join(documents, "report.pdf")).size,
            local: {repliesGivenWhole: 0, passagesGiven: citations!.length + laterCitations!.length, repliesGivenPassages: 2}, cloud: []});
    });

    it("two documents of the same name brought by one turn: each passage is cited as a chunk of its own document", async () => {
        const first = writeDocument(tempDir("citations-first"), "scan.pdf", await textPdf(40, {8: "The first scan names MARBLEFINCH."}));
        const second = writeDocument(tempDir("citations-second"), "scan.pdf", await textPdf(40, {31: "The second scan names COPPERLYNX."}));
        const turn = asLocalTurn(await core.startConversation({title: "Two scans"}, {text: "MARBLEFINCH COPPERLYNX",
            attachments: [{kind: "path", path: first}, {kind: "path", path: second}], maxTokens: 8, temperature: 0}));
        expect(turn.attachments!.map((attachment) => attachment.mode)).toEqual(["retrieved", "retrieved"]);
        const [firstId, secondId] = servicesOf(core).attachments.ofConversation(turn.conversationId).map((attachment) => attachment.id);
        const cited = citationsOf(core, turn.conversationId)[0]!.flatMap((citation) => citation.kind === "passage" ? [citation] : []);
        const ownerOf = (word: string) => cited.filter((citation) => core.citedPassage(turn.conversationId, citation.chunkId).text.includes(word))
            .map((citation) => [citation.attachmentId, citation.page]);
        expect(ownerOf("MARBLEFINCH")).toEqual([[firstId, 8]]);
        expect(ownerOf("COPPERLYNX")).toEqual([[secondId, 31]]);
    });

    it("over RPC, documents.passage reads only the asking conversation's chunks: another conversation's chunk id is PASSAGE_NOT_FOUND, bad input INVALID_INPUT", async () => {
        const owner = await askAboutPdf("secret.pdf", 12, "The vault opens with KESTRELCIPHER.", "How does the vault open? KESTRELCIPHER");
        const cited = firstPassageCited(core, owner.conversationId);
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

    it("deleting a conversation removes the record of what its replies were given, and its cited passages can no longer be read", async () => {
        const turn = await askAboutPdf("manual.pdf", 5, "Reset the pump with the HERONVALVE lever.", "How is the pump reset? HERONVALVE");
        const cited = firstPassageCited(core, turn.conversationId);
        const recorded = () => (servicesOf(core).database.prepare("SELECT count(*) AS n FROM reply_sources WHERE conversation_id = ?").get(turn.conversationId) as {n: number}).n;
        expect(recorded()).toBeGreaterThan(0);
        await core.deleteConversation(turn.conversationId);
        expect(recorded()).toBe(0);
        expect(() => core.citedPassage(turn.conversationId, cited.chunkId)).toThrow(expect.objectContaining({code: "CONVERSATION_NOT_FOUND"}));
    });
});

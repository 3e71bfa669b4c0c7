import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {isAuditEventOf} from "../../src/core/common/api/auditEvents.js";
import {vectorFromBlob} from "../../src/core/node/documents/chunkVectors.js";
import {settingKeys} from "../../src/core/node/settings/settingKeys.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";
import {decryptedRows} from "../helpers/decryptedRows.js";
import {longText} from "../helpers/documentFixtures.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {decryptedCopy} from "../security/helpers/decryptedCopy.js";

const modelPath = requireTestModel();

type VectorRow = {chunk_id: number, conversation_id: string, model: string, vector: Buffer};

/**
 * The test story model (stories260K.gguf) stands in as the embedding model here: no real embedding
 * model can be downloaded in the tests. Its vectors carry little meaning, so what is shown is the
 * mechanism (vectors stored per conversation, ranked by cosine similarity, fused with BM25,
 * scrubbed, deleted), each against the model's own similarities, not retrieval quality.
 */
describe.skipIf(modelPath == null)("document embeddings (stories260K standing in as the embedding model; real model, real store)", () => {
    let core: Core;
    let database: string;
    const documents = tempDir("document-embeddings");
    const vectorRows = (conversationId: string) => servicesOf(core).database
        .prepare("SELECT * FROM attachment_chunk_vectors WHERE conversation_id = ? ORDER BY chunk_id").all(conversationId) as VectorRow[];
    const retrievedChunkCount = (conversationId: string) => (servicesOf(core).database.prepare(`SELECT count(*) AS count FROM attachment_chunks c
        JOIN attachments a ON a.id = c.attachment_id WHERE c.conversation_id = ? AND a.mode = 'retrieved'`).get(conversationId) as {count: number}).count;
    const attach = (name: string, text: string) => {
        const file = path.join(documents, name);
        fs.writeFileSync(file, text);
        return [{kind: "path" as const, path: file}];
    };

    beforeAll(async () => {
        ({core, database} = await createTestCore(modelPath!));
    });
    afterAll(async () => {
        await core?.dispose();
    });

    it("without an embedding model, retrieval is BM25 alone: no vector is stored and no embedding context is made", async () => {
        const turn = asLocalTurn(await core.startConversation({title: "Plain"}, {text: "What is the vault code?", maxTokens: 4, temperature: 0,
            attachments: attach("plain.txt", longText(40, "The vault code is PLAINOTTER.", 30, 9))}));
        expect(turn.attachments![0]!.mode).toBe("retrieved");
        expect(vectorRows(turn.conversationId)).toEqual([]);
        expect(core.isolationReport(turn.conversationId).events.filter(isAuditEventOf("scrub.verified", "scrub.failed"))
            .filter((event) => event.data.purpose === "embedding")).toEqual([]);
    });

    it("with one chosen, each retrieved chunk's vector is stored in its own conversation's rows, and another conversation's retrieval never ranks it", async () => {
        servicesOf(core).settings.set(settingKeys.documents.embeddingModelPath, modelPath);
        const a = asLocalTurn(await core.startConversation({title: "A"}, {text: "What is the vault code?", maxTokens: 4, temperature: 0,
            attachments: attach("alpha.txt", longText(40, "The vault code is ALPHAQUOKKA.", 20, 2))}));
        const b = asLocalTurn(await core.startConversation({title: "B"}, {text: "What is the vault code?", maxTokens: 4, temperature: 0,
            attachments: attach("bravo.txt", longText(40, "The vault code is BRAVOWOMBAT.", 35, 3))}));
        expect([a.attachments![0]!.mode, b.attachments![0]!.mode]).toEqual(["retrieved", "retrieved"]);
        for (const conversationId of [a.conversationId, b.conversationId]) {
            const rows = vectorRows(conversationId);
            expect(rows.length).toBe(retrievedChunkCount(conversationId));
            expect(new Set(rows.map((row) => row.model)).size).toBe(1);
            expect(vectorFromBlob(rows[0]!.vector).length).toBeGreaterThan(0);
        }

        // B's retrieval with the query's vector: all of B's passages, none of A's, though A's chunks are as near.
        const embedder = (await servicesOf(core).embeddings.current())!;
        const {vectors: [query]} = await embedder.embed(["vault code ALPHAQUOKKA BRAVOWOMBAT"]);
        const fromB = servicesOf(core).attachments.retrieve(b.conversationId, "vault code ALPHAQUOKKA BRAVOWOMBAT", [], {model: embedder.modelId, vector: query!});
        expect(fromB.length).toBeGreaterThan(0);
        expect(fromB.filter((passage) => passage.name !== "bravo.txt" || passage.text.includes("ALPHAQUOKKA"))).toEqual([]);
        // Control: A's vectors are in the same table, by the same model.
        expect(vectorRows(a.conversationId)[0]!.model).toBe(embedder.modelId);
    });

    it("a question none of whose words is in the document still ranks passages, by the vector half: nearest first, not the document's order", async () => {
        const turn = asLocalTurn(await core.startConversation({title: "Meaning"}, {text: "Read this", maxTokens: 4, temperature: 0,
            attachments: attach("story.txt", longText(40, "Once upon a time a little girl named Lily found a shiny red ball.", 38, 4))}));
        const question = "Whom did Tom meet yesterday evening?";
        const {attachments, database: db} = servicesOf(core);
        const startLineOf = db.prepare("SELECT start_line AS startLine FROM attachment_chunks WHERE id = ?");
        // BM25 finds nothing: no word of the question is in the document, and the store falls back to the document's order.
        const documentOrder = attachments.retrieve(turn.conversationId, question).map((passage) => passage.startLine);
        expect(documentOrder).toEqual([...documentOrder].sort((x, y) => x - y));
        // The order of the model's own cosine similarities to the question, computed here from the stored vectors.
        const embedder = (await servicesOf(core).embeddings.current())!;
        const {vectors: [query]} = await embedder.embed([question]);
        const nearestFirst = vectorRows(turn.conversationId)
            .map((row) => ({chunkId: row.chunk_id, similarity: cosine(query!, vectorFromBlob(row.vector))}))
            .sort((x, y) => y.similarity - x.similarity || x.chunkId - y.chunkId)
            .map((row) => (startLineOf.get(row.chunkId) as {startLine: number}).startLine);
        expect(nearestFirst.slice(0, documentOrder.length), "the similarity order differs from the document's (else this proves nothing)").not.toEqual(documentOrder);

        const fused = attachments.retrieve(turn.conversationId, question, [], {model: embedder.modelId, vector: query!});
        expect(fused.map((passage) => passage.startLine)).toEqual(nearestFirst.slice(0, fused.length));
        // And in a real turn: the passage given first is the nearest chunk.
        const next = asLocalTurn(await core.sendMessage({conversationId: turn.conversationId, text: question, maxTokens: 4, temperature: 0}));
        expect(next.retrieved![0]).toMatchObject({name: "story.txt", startLine: nearestFirst[0]});
    });

    it("the embedding context's scrub is reported in the isolation report: zeroed, read back, verified, with the turns it served", () => {
        const [conversation] = core.listConversations().filter((summary) => summary.title === "Meaning");
        const report = core.isolationReport(conversation!.id);
        const embeddingScrubs = report.events.filter(isAuditEventOf("scrub.verified")).filter((event) => event.data.purpose === "embedding");
        // The first turn (document and question embedded), then the second (the question).
        expect(embeddingScrubs.length).toBe(2);
        for (const scrub of embeddingScrubs) {
            expect(scrub.data.contextId).toMatch(/^embed-[0-9a-f]{12}$/);
            expect(scrub.data.bytesZeroed).toBeGreaterThan(0);
            expect(scrub.data.bytesChecked).toBe(scrub.data.bytesZeroed);
            expect(scrub.data.nonZeroBytes).toBe(0);
        }
        expect(new Set(embeddingScrubs.map((scrub) => scrub.data.contextId)).size, "a new embedding context for each turn").toBe(2);
        expect(report.scrubs.failed).toBe(0);
        expect(report.scrubs.verified).toBeGreaterThanOrEqual(2);
    });

    it("an incognito conversation's vectors live only in memory: none in the database file", async () => {
        const turn = asLocalTurn(await core.startConversation({title: "Private", incognito: true}, {text: "What is the word?", maxTokens: 4, temperature: 0,
            attachments: attach("incognito.txt", longText(40, "The incognito word is GLASSFLAMINGO.", 15, 5))}));
        expect(turn.attachments![0]!.mode).toBe("retrieved");
        const inMemory = servicesOf(core).incognito.database.prepare("SELECT vector FROM attachment_chunk_vectors WHERE conversation_id = ?").all(turn.conversationId) as Array<{vector: Buffer}>;
        expect(inMemory.length).toBeGreaterThan(0);
        servicesOf(core).database.pragma("wal_checkpoint(TRUNCATE)");
        expect(decryptedRows(database).find((table) => table.table === "attachment_chunk_vectors")!.json).not.toContain(turn.conversationId);
        const onDisk = fs.readFileSync(decryptedCopy(database, tempDir("embeddings-incognito")));
        expect(inMemory.filter((row) => onDisk.includes(row.vector))).toEqual([]);
    });

    it("deleting a conversation removes its vector rows, and their bytes are in no decrypted page (free pages included)", async () => {
        const [conversation] = core.listConversations().filter((summary) => summary.title === "A");
        const vectors = vectorRows(conversation!.id).map((row) => row.vector);
        expect(vectors.length).toBeGreaterThan(0);
        servicesOf(core).database.pragma("wal_checkpoint(TRUNCATE)");
        const before = fs.readFileSync(decryptedCopy(database, tempDir("embeddings-before")));
        expect(vectors.filter((vector) => before.includes(vector)).length, "the vectors are on disk before (else this proves nothing)").toBe(vectors.length);

        const {purge} = await core.deleteConversation(conversation!.id);
        expect(purge).toBe("done");
        expect(vectorRows(conversation!.id)).toEqual([]);
        const after = fs.readFileSync(decryptedCopy(database, tempDir("embeddings-after")));
        expect(vectors.filter((vector) => after.includes(vector))).toEqual([]);
        // Control: the other conversation's vectors are still there.
        const [kept] = core.listConversations().filter((summary) => summary.title === "B");
        expect(vectorRows(kept!.id).filter((row) => after.includes(row.vector)).length).toBeGreaterThan(0);
    });

    it("Delete everything removes every vector: no row, no byte of them in a decrypted page", async () => {
        const vectors = (servicesOf(core).database.prepare("SELECT vector FROM attachment_chunk_vectors").all() as Array<{vector: Buffer}>).map((row) => row.vector);
        expect(vectors.length).toBeGreaterThan(0);
        const {wipe} = await core.deleteEverything();
        expect(wipe.clean).toBe(true);
        expect(servicesOf(core).database.prepare("SELECT count(*) AS count FROM attachment_chunk_vectors").get()).toEqual({count: 0});
        const after = fs.readFileSync(decryptedCopy(database, tempDir("embeddings-wiped")));
        expect(vectors.filter((vector) => after.includes(vector))).toEqual([]);
    });
});

function cosine(a: Float32Array, b: Float32Array) {
    return a.reduce((sum, value, index) => sum + value * b[index]!, 0);
}

describe.skipIf(modelPath == null)("cleanroom settings embedding-model (real CLI; stories260K standing in as the embedding model)", () => {
    const {env, db} = hermeticCliEnv("embedding-model-cli");
    const cli = (...args: string[]) => runCliCapturing([...args, "--db", db, "--json"], {env});

    it("set, show and clear the choice; a missing file or one that is not GGUF is refused with its reason, the choice unchanged", async () => {
        expect(JSON.parse((await cli("settings", "embedding-model", "show")).stdout)).toEqual({embeddingModel: null});
        const set = await cli("settings", "embedding-model", "set", modelPath!);
        expect(set.code, set.stderr).toBe(0);
        expect(JSON.parse(set.stdout)).toEqual({embeddingModel: path.resolve(modelPath!)});

        const missing = await cli("settings", "embedding-model", "set", path.join(tempDir("no-model"), "absent.gguf"));
        expect(missing.code).toBe(1);
        expect(JSON.parse(missing.stdout || missing.stderr)).toMatchObject({error: {code: "MODEL_NOT_FOUND"}});
        const notGguf = path.join(tempDir("not-gguf"), "notes.gguf");
        fs.writeFileSync(notGguf, "plain text, not a model");
        const refused = await cli("settings", "embedding-model", "set", notGguf);
        expect(refused.code).toBe(1);
        expect(JSON.parse(refused.stdout || refused.stderr)).toMatchObject({error: {code: "MODEL_NOT_GGUF"}});
        expect(JSON.parse((await cli("settings", "embedding-model", "show")).stdout)).toEqual({embeddingModel: path.resolve(modelPath!)});

        // The choice takes effect in `chat`: the retrieved document's chunks get vectors.
        const file = path.join(tempDir("embedding-cli-doc"), "book.txt");
        fs.writeFileSync(file, longText(40, "The harbour light is GREENHERON.", 30, 6));
        const chat = await runCliCapturing(["chat", "--model", modelPath!, "--db", db, "--threads", "1", "--context-size", "512", "--max-tokens", "4", "--temperature", "0", "--json",
            "--attach", file, "--prompt", "What is the harbour light?"], {env});
        expect(chat.code, chat.stderr).toBe(0);
        expect((JSON.parse(chat.stdout) as {attachments: Array<{mode: string}>}).attachments[0]!.mode).toBe("retrieved");
        expect(decryptedRows(db).find((table) => table.table === "attachment_chunk_vectors")!.json).not.toBe("[]");

        expect(JSON.parse((await cli("settings", "embedding-model", "clear")).stdout)).toEqual({embeddingModel: null});
        expect(JSON.parse((await cli("settings", "embedding-model", "show")).stdout)).toEqual({embeddingModel: null});
    });
});

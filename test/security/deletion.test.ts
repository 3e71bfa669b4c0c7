import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3-multiple-ciphers";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import type {Core} from "../../src/core/node/Core.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {requireTestModel} from "../helpers/testModel.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {databaseFiles, makeTestCanary, scanForSecrets, type Needle, type ScanSource} from "./helpers/scanForSecrets.js";
import {decryptedCopy} from "./helpers/decryptedCopy.js";

/**
 * The database's raw files, and what someone holding its key would read from them (a decrypted
 * copy of every page, free ones included): deleted text must be gone from both, not only hidden by the encryption.
 */
const filesWithKey = (database: string): ScanSource[] => [...databaseFiles(database), {kind: "file", path: decryptedCopy(database, tempDir("decrypted"))}];
/**
 * SQLite's own deletion mechanics (secure_delete, the checkpoint a reader holds up) are shown on an
 * unencrypted store, where the scan reads the pages directly: they are the same pages the encrypted store decrypts to.
 */
const plainStore = {key: {unencrypted: true}};
import {asLocalTurn, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

/**
 * Claim: deleting a conversation removes its messages, title, settings and audit trail, and its
 * text survives nowhere in the database file, its WAL or its shared-memory index.
 */
describe.skipIf(modelPath == null)("deleted means gone", () => {
    let core: Core;
    let database: string;
    let doomedId: string;
    let keptId: string;
    const secret = makeTestCanary("deleted");
    const kept = makeTestCanary("kept");
    // A retrieved document's term postings hold its words folded and apart: the canary's random part alone.
    const needles: Needle[] = [{label: "deleted secret", value: secret}, {label: "deleted secret as a retrieval term", value: secret.slice(secret.lastIndexOf("-") + 1)}];
    let doomedReply = "";
    const bytesScanned: number[] = [];

    beforeAll(async () => {
        ({core, database} = await createTestCore(modelPath!, {contextSize: 1024}));
        const doomed = core.createConversation({title: `About ${secret}`, settings: {systemPrompt: `Never say ${secret}.`}});
        const keep = core.createConversation({title: "Kept", settings: {systemPrompt: "Be brief."}});
        doomedId = doomed.id;
        keptId = keep.id;

        // Real turns: user text stored, reply streamed into the database (saved as it grows), audit trail written.
        const first = await core.sendMessage({conversationId: doomed.id, text: `My secret is ${secret}. Once upon a time`, maxTokens: 48, temperature: 0});
        await core.sendMessage({conversationId: keep.id, text: `Keep ${kept}. Once upon a time`, maxTokens: 16, temperature: 0});
        await core.sendMessage({conversationId: doomed.id, text: `Again: ${secret}`, maxTokens: 16, temperature: 0});
        doomedReply = first.reply;
        // Documents (#23): one small enough to go in whole, one so large it is chunked and indexed for retrieval (FTS5, its own shadow tables).
        const documents = tempDir("deletion-documents");
        fs.writeFileSync(path.join(documents, "small.txt"), `The deleted contract names ${secret}.`);
        fs.writeFileSync(path.join(documents, "large.txt"), Array.from({length: 400}, (_, line) => `Clause ${line}: ${secret} shall be kept apart.`).join("\n"));
        fs.writeFileSync(path.join(documents, "kept.txt"), `The kept contract names ${kept}.`);
        const withDocuments = asLocalTurn(await core.sendMessage({conversationId: doomed.id, text: `Read these about ${secret}`, maxTokens: 8, temperature: 0,
            attachments: [{kind: "path", path: path.join(documents, "small.txt")}, {kind: "path", path: path.join(documents, "large.txt")}]}));
        expect(withDocuments.attachments!.map((attachment) => attachment.mode)).toEqual(["whole", "retrieved"]);
        await core.sendMessage({conversationId: keep.id, text: "Read this", maxTokens: 8, temperature: 0, attachments: [{kind: "path", path: path.join(documents, "kept.txt")}]});
        fs.rmSync(documents, {recursive: true});

        // A message much larger than a page (4 KiB): SQLite keeps it in overflow pages, which must be zeroed too.
        servicesOf(core).store.appendMessage(doomed.id, {role: "user", content: `${secret} `.repeat(2000), status: "complete"});
        // A reply saved many times as it grows, as streaming does: every version went through the WAL.
        const growing = servicesOf(core).store.appendMessage(doomed.id, {role: "assistant", content: "", status: "streaming", route: "local"});
        let text = "";
        for (let piece = 0; piece < 50; piece++) {
            text += `${secret}-${piece} `;
            servicesOf(core).store.updateMessageContent(growing.id, text, piece);
        }
        servicesOf(core).store.finishMessage(growing.id, {content: text, status: "interrupted"});
        // Make sure the doomed conversation's text did reach the main file before the deletion.
        servicesOf(core).database.pragma("wal_checkpoint(PASSIVE)");
        const before = scanForSecrets(filesWithKey(database), needles);
        expect(before.findings.length, "the secret is stored before deletion (else the test proves nothing)").toBeGreaterThan(0);
    });

    afterAll(async () => {
        await core?.dispose();
    });

    it("removes every row of the conversation: messages, the conversation itself, its audit events", async () => {
        const {scrub: report, purge} = await core.deleteConversation(doomedId);
        expect(purge).toBe("done");
        expect(report?.verified, "the live context is scrubbed before the rows go").toBe(true);
        const db = servicesOf(core).database;
        expect(db.prepare("SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM conversations WHERE id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM audit_events WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM audit_events WHERE data_json LIKE ?").get(`%${doomedId}%`)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM attachments WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM attachment_chunks WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM attachment_terms WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare("SELECT COUNT(*) AS n FROM attachment_chunk_lengths WHERE conversation_id = ?").get(doomedId)).toEqual({n: 0});
        expect(db.prepare(`SELECT COUNT(*) AS n FROM attachment_chunks_fts WHERE attachment_chunks_fts MATCH '"${secret}"'`).get()).toEqual({n: 0});
        expect(core.getConversation(keptId).messages.length).toBe(4);
        expect(core.getConversation(keptId).messages[2]!.attachments!.map((attachment) => attachment.name)).toEqual(["kept.txt"]);
    });

    it("leaves no byte of its text in the database, WAL or shm while the core is still running", () => {
        const extra: Needle[] = doomedReply.length >= 24 && !core.getConversation(keptId).messages.some((m) => m.content.includes(doomedReply))
            ? [{label: "deleted reply", value: doomedReply}]
            : [];
        const scan = scanForSecrets(filesWithKey(database), [...needles, ...extra, {label: "conversation id", value: doomedId}]);
        bytesScanned.push(scan.bytesScanned);
        expect(scan.findings).toEqual([]);
        expect(scan.bytesScanned).toBeGreaterThan(0);

        // Control: the same scan does see the text of the conversation that was kept.
        const control = scanForSecrets(filesWithKey(database), [{label: "kept", value: kept}]);
        expect(control.findings.length).toBeGreaterThan(0);
    });

    it("leaves no byte of it after the core closes and the database is reopened", async () => {
        await core.dispose();
        const reopened = openDatabase(database);
        try {
            expect(reopened.pragma("integrity_check", {simple: true})).toBe("ok");
            expect(new ConversationStore(reopened).find(doomedId)).toBeUndefined();
        } finally {
            reopened.close();
        }
        const scan = scanForSecrets(filesWithKey(database), needles);
        bytesScanned.push(scan.bytesScanned);
        expect(scan.findings).toEqual([]);
        console.info(`[deletion] bytes scanned: ${bytesScanned.join(" + ")} = ${bytesScanned.reduce((a, b) => a + b, 0)}`);
    });
});

/** The two mechanisms the claim rests on, each shown to matter: without it, the scan finds the text. */
describe("deletion controls (the scan can fail)", () => {
    function writeAndDelete(options: {secureDelete: boolean, pinReader: boolean}) {
        const database = path.join(tempDir("deletion-control"), "control.db");
        const db = openDatabase(database, plainStore);
        if (!options.secureDelete)
            db.pragma("secure_delete = OFF");
        const store = new ConversationStore(db);
        const secret = makeTestCanary("control");
        const conversation = store.create({title: "control"});
        store.appendMessage(conversation.id, {role: "user", content: `${secret} `.repeat(50), status: "complete"});
        db.pragma("wal_checkpoint(TRUNCATE)");
        // A reader that holds a snapshot keeps the checkpoint from finishing.
        const reader = options.pinReader ? openDatabase(database, {readonly: true, ...plainStore}) : null;
        const snapshot = reader == null ? undefined : reader.transaction(() => {
            reader.prepare("SELECT COUNT(*) FROM messages").get();
            store.delete(conversation.id);
            return scanForSecrets(databaseFiles(database), [{label: "secret", value: secret}]);
        })();
        const scan = snapshot ?? (store.delete(conversation.id), scanForSecrets(databaseFiles(database), [{label: "secret", value: secret}]));
        reader?.close();
        db.close();
        const afterClose = scanForSecrets(databaseFiles(database), [{label: "secret", value: secret}]);
        fs.rmSync(path.dirname(database), {recursive: true, force: true});
        return {...scan, afterClose};
    }

    it("with secure_delete OFF the deleted text stays in the file's free pages", () => {
        expect(writeAndDelete({secureDelete: false, pinReader: false}).findings.length).toBeGreaterThan(0);
    });

    it("with secure_delete ON (the shipped setting) it is gone", () => {
        expect(writeAndDelete({secureDelete: true, pinReader: false}).findings).toEqual([]);
    });

    it("while another connection holds a read snapshot, the checkpoint cannot finish: the text is still on disk then (the purge is pending, see below)", () => {
        const scan = writeAndDelete({secureDelete: true, pinReader: true});
        expect(scan.findings.length).toBeGreaterThan(0);
        expect(scan.afterClose.findings).toEqual([]);
    });
});

/**
 * Claim: a deletion that another connection's read snapshot keeps on disk is reported as pending
 * (to the caller and as `deletion.pending`), and the purge finishes once that reader is done, while
 * the database stays open: on the purger's timer, at the next write, at close, or when the next
 * process opens the database. `deletion.purged` is then recorded and the text is gone from the
 * database file, its WAL and its shm.
 */
describe("a deletion that another reader holds up is purged when the reader is done", () => {
    type Fixture = {database: string, db: Database.Database, store: ConversationStore, audit: AuditLog, secret: string, id: string, reader: Database.Database};

    /** A database with one conversation full of a secret, checkpointed, and a second connection reading it inside a transaction. */
    function fixture(retryIntervalMs: number): Fixture {
        const database = path.join(tempDir("deletion-pending"), "pending.db");
        const db = openDatabase(database, plainStore);
        const audit = new AuditLog(db);
        const store = new ConversationStore(db, {audit, purge: {retryIntervalMs}});
        const secret = makeTestCanary("pending");
        const conversation = store.create({title: "doomed"});
        store.appendMessage(conversation.id, {role: "user", content: `${secret} `.repeat(50), status: "complete"});
        db.pragma("wal_checkpoint(TRUNCATE)");
        const reader = openDatabase(database, {readonly: true, ...plainStore});
        reader.exec("BEGIN");
        reader.prepare("SELECT COUNT(*) FROM messages").get();
        return {database, db, store, audit, secret, id: conversation.id, reader};
    }
    const onDisk = ({database, secret}: Fixture) => scanForSecrets(databaseFiles(database), [{label: "secret", value: secret}]).findings.length;
    const kinds = ({audit}: Fixture) => audit.events({kinds: ["deletion.pending", "deletion.purged"]}).map((event) => event.kind);

    it("the deletion says pending, records deletion.pending, and the timer finishes the purge once the reader ends", async () => {
        const f = fixture(50);
        // The deletion does not wait on the reader: every checkpoint it tries runs with no busy wait
        // (the connection's busy_timeout is 5 s). How long it takes is the bench's ("deletion beside a reader").
        const busyTimeoutAtCheckpoints: number[] = [];
        const pragma = f.db.pragma.bind(f.db);
        f.db.pragma = ((source: string, options?: Parameters<typeof pragma>[1]) => {
            if (source.startsWith("wal_checkpoint"))
                busyTimeoutAtCheckpoints.push(pragma("busy_timeout", {simple: true}) as number);
            return pragma(source, options);
        }) as typeof f.db.pragma;
        expect(f.store.delete(f.id)).toEqual({purge: "pending"});
        expect(busyTimeoutAtCheckpoints.length).toBeGreaterThan(0);
        expect(busyTimeoutAtCheckpoints.every((timeout) => timeout === 0)).toBe(true);
        expect(pragma("busy_timeout", {simple: true})).toBe(5000);
        expect(f.store.find(f.id)).toBeUndefined();
        expect(kinds(f)).toEqual(["deletion.pending"]);
        expect(f.store.purger.pending).toBe(true);
        // Two more checkpoints tried by the timer while the reader holds its snapshot: neither could purge.
        const triedBefore = busyTimeoutAtCheckpoints.length;
        await expect.poll(() => busyTimeoutAtCheckpoints.length, {timeout: 10_000}).toBeGreaterThanOrEqual(triedBefore + 2);
        expect(kinds(f)).toEqual(["deletion.pending"]);
        expect(onDisk(f), "still on disk while the reader holds its snapshot").toBeGreaterThan(0);

        f.reader.exec("COMMIT");
        await expect.poll(() => kinds(f), {timeout: 10_000}).toEqual(["deletion.pending", "deletion.purged"]);
        expect(f.audit.events({kinds: ["deletion.purged"]})[0]!.data).toMatchObject({trigger: "timer", deletions: 1});
        expect(f.store.purger.pending).toBe(false);
        expect(onDisk(f), "gone from the db, WAL and shm bytes while the database is still open").toBe(0);
        f.reader.close();
        f.db.close();
    });

    it("the next write finishes it when no timer fires", () => {
        const f = fixture(3_600_000);
        expect(f.store.delete(f.id).purge).toBe("pending");
        f.reader.exec("COMMIT");
        expect(onDisk(f)).toBeGreaterThan(0);
        f.store.create({title: "the next write"});
        expect(kinds(f)).toEqual(["deletion.pending", "deletion.purged"]);
        expect(f.audit.events({kinds: ["deletion.purged"]})[0]!.data).toMatchObject({trigger: "write"});
        expect(onDisk(f)).toBe(0);
        f.reader.close();
        f.db.close();
    });

    it("close finishes it, and a purge left pending by a process that is gone is finished by the next one that opens the database", () => {
        const atClose = fixture(3_600_000);
        atClose.store.delete(atClose.id);
        atClose.reader.exec("COMMIT");
        atClose.store.purger.dispose();
        expect(atClose.audit.events({kinds: ["deletion.purged"]})[0]!.data).toMatchObject({trigger: "close"});
        expect(onDisk(atClose)).toBe(0);
        atClose.reader.close();
        atClose.db.close();

        const left = fixture(3_600_000);
        left.store.delete(left.id);
        left.db.close(); // the deleting process ends while the reader still reads
        expect(onDisk(left)).toBeGreaterThan(0);
        left.reader.exec("COMMIT");
        left.reader.close();
        const next = openDatabase(left.database, plainStore);
        const audit = new AuditLog(next);
        const store = new ConversationStore(next, {audit});
        expect(audit.events({kinds: ["deletion.purged"]}).map((event) => event.data.trigger)).toEqual(["open"]);
        expect(store.purger.pending).toBe(false);
        expect(onDisk(left)).toBe(0);
        next.close();
    });
});

import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {AttachmentStore} from "../../src/core/node/documents/AttachmentStore.js";
import type {DocumentChunk} from "../../src/core/node/documents/chunkDocument.js";
import type {RetrievedPassage} from "../../src/core/node/documents/documentPrompt.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {migrations} from "../../src/core/node/database/migrations.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {tempDir} from "../helpers/tempCore.js";

const fillerWords = "fox bird tree river stone cloud garden lamp door window apple house".split(" ");

/** `count` chunks of about 1,200 characters of filler, `sentence` in chunk `at`. */
function chunks(count: number, sentence: string, at: number): DocumentChunk[] {
    return Array.from({length: count}, (_, index) => ({
        page: index + 1, startLine: 1, endLine: 20,
        text: index === at ? sentence : Array.from({length: 200}, (_word, word) => fillerWords[(index * 7 + word * 3) % fillerWords.length]).join(" ")
    }));
}

describe("retrieval for a turn that brings a document", () => {
    const closers: Array<() => void> = [];
    afterEach(() => closers.splice(0).forEach((close) => close()));

    const open = () => {
        const database = path.join(tempDir("retrieval"), "retrieval.db");
        const db = openDatabase(database, {key: {unencrypted: true}});
        const store = new ConversationStore(db);
        closers.push(() => {
            store.purger.dispose();
            db.close();
        });
        return {database, db, store, attachments: new AttachmentStore(db)};
    };
    const attach = ({store, attachments}: ReturnType<typeof open>, conversationId: string, name: string, documentChunks: DocumentChunk[]) =>
        attachments.transaction(() => {
            const message = store.appendMessage(conversationId, {role: "user", content: `Here is ${name}.`, status: "complete"});
            attachments.add(conversationId, message.id, {document: {name, format: "text", bytes: 1, pages: []}, tokens: 1, mode: "retrieved", chunks: documentChunks});
        });

    it("writes nothing to the database, however large the document: its chunks reach the store's index once, when the turn is stored", () => {
        const opened = open();
        const {database, db, store, attachments} = opened;
        const conversation = store.create({title: "Contracts"});
        attach(opened, conversation.id, "earlier.txt", chunks(20, "The earlier contract names the QUARTZHERON clause.", 5));
        const fileBytes = () => [database, database + "-wal"].map((file) => fs.statSync(file).size);
        const before = fileBytes();

        // About 5 MB of chunks, over a page cache made 1 MiB (from 16) to stand for a document of over 16 MB: a transaction that
        // indexed them would spill its pages to the WAL before it was rolled back.
        db.pragma("cache_size = -1024");
        const arriving = chunks(4000, "The new contract names the QUARTZHERON penalty on page 3001.", 3000);
        const passages = attachments.retrieve(conversation.id, "Which QUARTZHERON penalty?", [{name: "new.txt", chunks: arriving}]);

        expect(passages.slice(0, 2).map((passage) => [passage.name, passage.pendingIndex, passage.page]))
            .toEqual([["new.txt", 0, 3001], ["earlier.txt", null, 6]]);
        expect(fileBytes(), "the database file and its WAL, in bytes, after planning").toEqual(before);

        attach(opened, conversation.id, "new.txt", arriving);
        const indexed = (word: string) => db.prepare("SELECT count(*) FROM attachment_chunks_fts WHERE attachment_chunks_fts MATCH ?").pluck().get(word);
        expect(indexed("QUARTZHERON"), "both documents' sentences, each indexed once").toBe(2);
        expect(attachments.retrieve(conversation.id, "Which QUARTZHERON penalty?").slice(0, 2).map((passage) => [passage.name, passage.page]))
            .toEqual([["new.txt", 3001], ["earlier.txt", 6]]);
    });

    it("a message's documents are its own: not another message's, nor the same message id asked of another conversation", () => {
        const opened = open();
        const {store, attachments} = opened;
        const contracts = store.create({title: "Contracts"});
        const recipes = store.create({title: "Recipes"});
        attach(opened, contracts.id, "lease.txt", chunks(2, "The lease.", 0));
        attach(opened, contracts.id, "nda.txt", chunks(2, "The NDA.", 0));
        attach(opened, recipes.id, "soup.txt", chunks(2, "The soup.", 0));
        const [leaseMessage, ndaMessage] = store.messages(contracts.id);

        expect(attachments.ofMessage(contracts.id, leaseMessage!.id).map((document) => document.name)).toEqual(["lease.txt"]);
        expect(attachments.ofMessage(contracts.id, ndaMessage!.id).map((document) => document.name)).toEqual(["nda.txt"]);
        expect(attachments.ofMessage(recipes.id, leaseMessage!.id)).toEqual([]);
    });

    it("a question's common words neither hide its rare one nor thin the passages; a word in half of a small document's chunks still finds them", () => {
        const opened = open();
        const conversation = opened.store.create({title: "Garden notes"});
        // Every chunk has "the", "fox", "in", "garden" and "lamp" (in more than half of the index's rows); only page 31 names the QUARTZHERON.
        const walk = "The fox walked in the garden under the lamp.";
        attach(opened, conversation.id, "notes.txt", Array.from({length: 40}, (_, index) => ({
            page: index + 1, startLine: 1, endLine: 1, text: index === 30 ? `${walk} It met the QUARTZHERON.` : walk
        })));
        const passages = opened.attachments.retrieve(conversation.id, "Which fox in the garden lamp is the QUARTZHERON?");
        expect(passages[0]!.page).toBe(31);
        expect(passages).toHaveLength(24);

        const small = open();
        const twoPages = small.store.create({title: "Two pages"});
        attach(small, twoPages.id, "two.txt", [{page: 1, startLine: 1, endLine: 1, text: "The ledger balances."}, {page: 2, startLine: 1, endLine: 1, text: "Nothing else."}]);
        expect(small.attachments.retrieve(twoPages.id, "Does the ledger balance?").map((passage) => passage.page)).toEqual([1]);
    });

    it("two documents of the same name that arrive together are told apart by their place", () => {
        const opened = open();
        const conversation = opened.store.create({title: "Two reports"});
        const passages = opened.attachments.retrieve(conversation.id, "OSPREYLEDGER", [
            {name: "report.pdf", chunks: chunks(3, "The first report names OSPREYLEDGER.", 1)},
            {name: "report.pdf", chunks: chunks(3, "The second report names OSPREYLEDGER too, OSPREYLEDGER twice.", 2)}
        ]);
        expect(passages.map((passage) => [passage.pendingIndex, passage.page])).toEqual([[1, 3], [0, 2]]);
    });

    it("a conversation's passages do not depend on what other conversations hold: the same whether another holds documents full of its words, of other words, or none", () => {
        // Which of B's chunks come first depends on how rare each asked word is and on the chunks' lengths: with the whole
        // index's statistics, another conversation's documents moved them.
        const harborPages = Array.from({length: 12}, (_, index): DocumentChunk => ({
            page: index + 1, startLine: 1, endLine: 3,
            text: [
                index % 3 === 0 ? "The harbor ledger lists every ship." : "",
                index % 4 === 1 ? "Harbor fees rose; the harbor master wrote it down." : "",
                index % 5 === 2 ? "The ledger was kept in the tower." : "",
                Array.from({length: 4 + (index * 5) % 17}, (_word, word) => fillerWords[(index + word * 5) % fillerWords.length]).join(" ")
            ].join(" ")
        }));
        const arriving = {name: "letters.txt", chunks: [
            {page: 1, startLine: 1, endLine: 2, text: "A letter about the harbor tower and its ledger."},
            {page: 2, startLine: 1, endLine: 2, text: "Nothing of note; the fox slept."}
        ]};
        const passagesOfB = (other: DocumentChunk[] | null) => {
            const opened = open();
            if (other != null)
                attach(opened, opened.store.create({title: "A"}).id, "a.txt", other);
            const b = opened.store.create({title: "B"});
            attach(opened, b.id, "harbor.txt", harborPages);
            const shown = (passages: RetrievedPassage[]) => passages.map((passage) => `${passage.name} p${passage.page}`);
            return {
                stored: shown(opened.attachments.retrieve(b.id, "What does the harbor ledger say about the tower?")),
                withNewDocument: shown(opened.attachments.retrieve(b.id, "What does the harbor ledger say about the tower?", [arriving]))
            };
        };

        const alone = passagesOfB(null);
        expect(alone.stored.slice(0, 3), "the short chunks naming the ledger and the tower first").toEqual(["harbor.txt p8", "harbor.txt p3", "harbor.txt p1"]);
        expect(alone.withNewDocument[0]).toBe("letters.txt p1");
        const fullOfItsWords = Array.from({length: 60}, (_, index): DocumentChunk => ({
            page: index + 1, startLine: 1, endLine: 1, text: `The ledger ${index % 2 === 0 ? "and the tower" : "of the harbor"} ${"fox ".repeat(index % 7)}`
        }));
        expect(passagesOfB(fullOfItsWords), "B's passages while A holds chunks full of B's words").toEqual(alone);
        const ofOtherWords = chunks(60, "Nothing here is asked about.", 0);
        expect(passagesOfB(ofOtherWords), "B's passages while A holds long chunks of other words").toEqual(alone);
    });

    it("documents stored before the term postings existed are indexed by the migration: the same passages after it", () => {
        const database = path.join(tempDir("retrieval-migration"), "retrieval.db");
        const firstOpen = openDatabase(database, {key: {unencrypted: true}});
        const store = new ConversationStore(firstOpen);
        const conversation = store.create({title: "Contracts"});
        const opened = {database, db: firstOpen, store, attachments: new AttachmentStore(firstOpen)};
        attach(opened, conversation.id, "contract.txt", chunks(30, "The contract names the QUARTZHERON penalty.", 17));
        const question = "Which QUARTZHERON penalty does the fox pay?";
        const before = opened.attachments.retrieve(conversation.id, question);
        // The database as the release before this migration left it: no postings tables, one migration fewer.
        firstOpen.exec("DROP TABLE attachment_terms; DROP TABLE attachment_chunk_lengths");
        firstOpen.pragma(`user_version = ${migrations.length - 1}`);
        store.purger.dispose();
        firstOpen.close();

        const db = openDatabase(database, {key: {unencrypted: true}});
        const reopened = new ConversationStore(db);
        closers.push(() => {
            reopened.purger.dispose();
            db.close();
        });
        const after = new AttachmentStore(db).retrieve(conversation.id, question);
        expect(after[0]!.page, "the chunk naming the QUARTZHERON first").toBe(18);
        expect(after).toEqual(before);
    });
});

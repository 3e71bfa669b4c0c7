import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";
import {decryptedCopy} from "../security/helpers/decryptedCopy.js";
import {scanForSecrets} from "../security/helpers/scanForSecrets.js";

/** `app.deleteEverything` through the validated service, on a real encrypted SQLite file, the core staying up. */
describe("app.deleteEverything", () => {
    let open: Array<{core: Core, service: CoreService}> = [];
    afterEach(async () => {
        for (const {core, service} of open) {
            service.dispose();
            await core.dispose();
        }
        open = [];
    });

    it("is refused without the phrase, then deletes every row, empties the WAL, removes the model records, keeps model files and the core running", async () => {
        const home = tempDir("delete-everything");
        const database = path.join(home, "store.db");
        const modelsDir = path.join(home, "models");
        fs.mkdirSync(modelsDir);
        fs.writeFileSync(path.join(modelsDir, "registry.json"), JSON.stringify({version: 1, models: [], defaultModelId: null}));
        fs.writeFileSync(path.join(modelsDir, "kept.gguf"), "not a real model");
        const core = openTestCore(() => Promise.reject(new Error("no model in this test")), {database});
        const service = createCoreService(core, {models: {dir: modelsDir}});
        open.push({core, service});

        const secret = "Wombat5512Quasar";
        const {store, settings, attachments} = servicesOf(core);
        const conversation = core.createConversation({title: `About ${secret}`});
        const {reply} = store.appendTurn(conversation.id, `the word is ${secret}`, {route: "local", routeReason: "test"});
        store.finishMessage(reply.id, {content: `noted ${secret}`, status: "complete", tokens: 3, tokensPerSecond: 1});
        core.saveDraft(conversation.id, `draft ${secret}`);
        // A document of the conversation (#23), its text and its chunks in the full-text index.
        const {user} = store.appendTurn(conversation.id, "read this", {route: "local", routeReason: "test"});
        attachments.add(conversation.id, user.id, {
            document: {name: "contract.txt", format: "text", bytes: 5000, pages: [{page: 1, text: `Clause 1 names ${secret}.\n`.repeat(200)}]}, tokens: 2000, mode: "retrieved"
        });
        settings.set("test.secret", secret);

        const pagesHold = () => scanForSecrets([{kind: "file", path: decryptedCopy(database, tempDir("delete-everything-pages"))}], [{label: "secret", value: secret}]).findings;
        expect(pagesHold().length, "the decrypted pages hold the secret before (else the scan after proves nothing)").toBeGreaterThan(0);

        const refused = await service.call("app.deleteEverything", {confirm: "yes"});
        expect(refused.ok).toBe(false);
        expect(core.listConversations()).toHaveLength(1);

        const result = await service.call("app.deleteEverything", {confirm: "delete everything"});
        expect(result.ok, JSON.stringify(result)).toBe(true);
        const report = (result as {ok: true, value: {checks: Array<{what: string, remains: boolean, removed: boolean}>, clean: boolean, modelFilesKept: number}}).value;
        expect(report.clean).toBe(true);
        expect(report.checks.every((check) => !check.remains)).toBe(true);
        expect(report.checks.map((check) => check.what)).toEqual(expect.arrayContaining(["rows of messages", "rows of conversations", "rows of audit_events", "rows of settings", "rows of canaries", "rows of attachments", "rows of attachment_chunks", "rows of attachment_chunk_vectors", "registered-model records"]));
        expect(report.checks.find((check) => check.what === "registered-model records")?.removed).toBe(true);
        expect(report.modelFilesKept).toBe(1);
        expect(fs.existsSync(path.join(modelsDir, "kept.gguf"))).toBe(true);
        expect(fs.existsSync(path.join(modelsDir, "registry.json"))).toBe(false);
        expect(fs.statSync(database + "-wal", {throwIfNoEntry: false})?.size ?? 0).toBe(0);

        // Through the key: no row anywhere holds the secret, and the search index finds nothing.
        const reader = openDatabase(database, {readonly: true});
        try {
            const tables = reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'").all() as Array<{name: string}>;
            for (const {name} of tables)
                expect(JSON.stringify(reader.prepare(`SELECT * FROM "${name}"`).all()), name).not.toContain(secret);
        } finally {
            reader.close();
        }
        expect(core.searchConversations(secret)).toEqual([]);
        // Every page as the key decrypts it, free pages included: the text (the document's and its index's too) is not hidden, it is gone.
        expect(pagesHold()).toEqual([]);
        for (const suffix of ["", "-wal", "-shm"])
            if (fs.existsSync(database + suffix))
                expect(fs.readFileSync(database + suffix).includes(secret)).toBe(false);

        // The core keeps running on the same database.
        const next = await service.call("conversations.create", {title: "After"});
        expect(next.ok).toBe(true);
        expect(core.listConversations().map((summary) => summary.title)).toEqual(["After"]);
    });
});

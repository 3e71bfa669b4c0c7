import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import {connectCoreClient, createInProcessChannelPair, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {type Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {runCliGuarded} from "../helpers/runCliGuarded.js";
import {tempDir} from "../helpers/tempCore.js";
import {databaseFiles, makeTestCanary, scanForSecrets} from "./helpers/scanForSecrets.js";
import {decryptedCopy} from "./helpers/decryptedCopy.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";

/** A second connection that reads the database inside a transaction: its snapshot blocks the WAL checkpoint until `end()`. */
function pinReader(database: string) {
    const reader = openDatabase(database, {readonly: true});
    reader.exec("BEGIN");
    reader.prepare("SELECT COUNT(*) FROM messages").get();
    return {end: () => {
        reader.exec("COMMIT");
        reader.close();
    }};
}

const secretOnDisk = (database: string, secret: string) => scanForSecrets(databaseFiles(database), [{label: "secret", value: secret}]).findings.length;
/** What someone with the key would find: the database and its WAL decrypted, every page (see `decryptedCopy`). */
const secretWithKey = (database: string, secret: string) =>
    scanForSecrets([{kind: "file", path: decryptedCopy(database, path.dirname(database))}], [{label: "secret", value: secret}]).findings.length;
const walBytes = (database: string) => fs.statSync(database + "-wal", {throwIfNoEntry: false})?.size ?? 0;

/** Claim: the CLI and the app say when a deletion's purge is pending, and the purge finishes when the other reader is done. */
describe("a deletion held up by another reader, as the CLI and the app report it", () => {
    it("conversations delete (JSON, then text) says the purge is pending and why; the next open of the database finishes it", async () => {
        const database = path.join(tempDir("deletion-cli"), "cli.db");
        const db = openDatabase(database);
        const store = new ConversationStore(db);
        const secret = makeTestCanary("cli-pending");
        const ids = ["doomed-json", "doomed-text"];
        for (const id of ids) {
            store.create({id, title: "doomed"});
            store.appendMessage(id, {role: "user", content: `${secret} `.repeat(40), status: "complete"});
        }
        db.close();

        const reader = pinReader(database);
        const json = await runCliGuarded(["conversations", "delete", ids[0]!, "--db", database, "--json"], {hangGuardMs: 60_000});
        expect(json.hung).toBe(false);
        expect(json.code).toBe(0);
        expect(JSON.parse(json.stdout)).toEqual({
            deleted: ids[0], purge: "pending",
            purgePending: expect.stringMatching(/^another reader holds the database, so the deleted text stays in its file and WAL until that reader is done/)
        });
        const text = await runCliGuarded(["conversations", "delete", ids[1]!, "--db", database], {hangGuardMs: 60_000});
        expect(text.code).toBe(0);
        expect(text.stdout).toMatch(new RegExp(`^Deleted ${ids[1]}, but the purge is pending: another reader holds the database`));
        // Encrypted at rest: the raw bytes never hold it; the WAL still holds the pages from before the deletion.
        expect(secretOnDisk(database, secret), "never in the clear, even while the reader reads").toBe(0);
        expect(walBytes(database), "the WAL keeps the old pages while the reader reads").toBeGreaterThan(0);

        reader.end();
        const listed = await runCliGuarded(["conversations", "list", "--db", database, "--json"], {hangGuardMs: 60_000});
        expect(JSON.parse(listed.stdout)).toEqual({conversations: []});
        const check = openDatabase(database, {readonly: true});
        const events = new AuditLog(check).events({kinds: ["deletion.pending", "deletion.purged"]});
        check.close();
        expect(events.map((event) => event.kind)).toEqual(["deletion.pending", "deletion.pending", "deletion.purged"]);
        expect(events[2]!.data).toMatchObject({trigger: "open", deletions: 2});
        expect(secretOnDisk(database, secret)).toBe(0);
        expect(walBytes(database)).toBe(0);
        expect(secretWithKey(database, secret), "not even with the key").toBe(0);
    }, 200_000);

    describe("the app's conversations.delete", () => {
        let core: Core;
        let service: CoreService;
        let client: ConnectedCoreClient;
        let closeChannel: () => void;
        let database: string;
        const audit: AuditEvent[] = [];

        beforeAll(async () => {
            database = path.join(tempDir("deletion-rpc"), "core.db");
            core = openTestCore(await loadLlama(), {database, deletionGraceMs: 200, purge: {retryIntervalMs: 50}});
            service = createCoreService(core);
            const [coreSide, clientSide, close] = createInProcessChannelPair();
            serveCoreOverChannel(service, coreSide);
            client = connectCoreClient(clientSide);
            closeChannel = close;
            client.subscribe("audit.event", (event) => audit.push(event));
        });
        afterAll(async () => {
            closeChannel?.();
            service?.dispose();
            await core?.dispose();
        });

        it("answers purge: pending while a reader holds the database, then the core purges it and emits deletion.purged", async () => {
            const secret = makeTestCanary("rpc-pending");
            const conversation = await client.call("conversations.create", {title: "doomed"});
            servicesOf(core).store.appendMessage(conversation.id, {role: "user", content: `${secret} `.repeat(40), status: "complete"});
            const reader = pinReader(database);
            const result = await client.call("conversations.delete", {conversationId: conversation.id});
            expect(result).toEqual({scrub: null, purge: "pending"});
            await expect.poll(() => audit.map((event) => event.kind)).toContain("deletion.pending");
            expect(secretOnDisk(database, secret)).toBe(0);
            expect(walBytes(database)).toBeGreaterThan(0);

            reader.end();
            await expect.poll(() => audit.find((event) => event.kind === "deletion.purged")?.data, {timeout: 10_000}).toMatchObject({trigger: "timer"});
            expect(secretOnDisk(database, secret)).toBe(0);
            expect(walBytes(database)).toBe(0);
            expect(secretWithKey(database, secret), "not even with the key").toBe(0);

            const another = await client.call("conversations.create", {title: "no reader this time"});
            expect(await client.call("conversations.delete", {conversationId: another.id})).toEqual({scrub: null, purge: "done"});
        });

        it("a CLI deletion left pending by a reader is finished by the running app once the reader ends, with no write in between", async () => {
            const secret = makeTestCanary("cli-while-app");
            const conversation = await client.call("conversations.create", {title: "doomed from the terminal"});
            servicesOf(core).store.appendMessage(conversation.id, {role: "user", content: `${secret} `.repeat(40), status: "complete"});
            audit.length = 0;
            const reader = pinReader(database);
            const deleted = await runCliGuarded(["conversations", "delete", conversation.id, "--db", database, "--json"], {hangGuardMs: 60_000});
            expect(deleted.code).toBe(0);
            expect(JSON.parse(deleted.stdout)).toMatchObject({deleted: conversation.id, purge: "pending"});
            const purged = () => core.auditEvents({kinds: ["deletion.purged"], limit: 5000}).length;
            const purgedBefore = purged();
            expect(servicesOf(core).store.purger.pending, "the app sees the CLI's pending purge").toBe(true);

            // The CLI has exited; the app only reads from here on.
            reader.end();
            await expect.poll(() => servicesOf(core).store.purger.pending, {timeout: 10_000}).toBe(false);
            expect(purged()).toBe(purgedBefore + 1);
            expect(core.auditEvents({kinds: ["deletion.purged"], limit: 1})[0]!.data).toMatchObject({trigger: "timer"});
            expect(walBytes(database)).toBe(0);
            expect(await client.call("conversations.list", {})).not.toContainEqual(expect.objectContaining({id: conversation.id}));
            expect(secretOnDisk(database, secret)).toBe(0);
            expect(secretWithKey(database, secret), "not even with the key").toBe(0);
        });
    });
});

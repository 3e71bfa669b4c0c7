import path from "node:path";
import Database from "better-sqlite3";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {AuditEvent} from "../../src/core/common/types.js";
import {connectCoreClient, createInProcessChannelPair, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {type Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {ConversationStore} from "../../src/core/node/store/ConversationStore.js";
import {openDatabase} from "../../src/core/node/store/openDatabase.js";
import {runCliGuarded} from "../helpers/runCliGuarded.js";
import {tempDir} from "../helpers/tempCore.js";
import {databaseFiles, makeTestCanary, scanForSecrets} from "./helpers/scanForSecrets.js";
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
        expect(secretOnDisk(database, secret), "still on disk while the reader reads").toBeGreaterThan(0);

        reader.end();
        const listed = await runCliGuarded(["conversations", "list", "--db", database, "--json"], {hangGuardMs: 60_000});
        expect(JSON.parse(listed.stdout)).toEqual({conversations: []});
        const check = new Database(database, {readonly: true});
        const events = new AuditLog(check).events({kinds: ["deletion.pending", "deletion.purged"]});
        check.close();
        expect(events.map((event) => event.kind)).toEqual(["deletion.pending", "deletion.pending", "deletion.purged"]);
        expect(events[2]!.data).toMatchObject({trigger: "open", deletions: 2});
        expect(secretOnDisk(database, secret)).toBe(0);
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
            await core?.close();
        });

        it("answers purge: pending while a reader holds the database, then the core purges it and emits deletion.purged", async () => {
            const secret = makeTestCanary("rpc-pending");
            const conversation = await client.call("conversations.create", {title: "doomed"});
            servicesOf(core).store.appendMessage(conversation.id, {role: "user", content: `${secret} `.repeat(40), status: "complete"});
            const reader = pinReader(database);
            const result = await client.call("conversations.delete", {conversationId: conversation.id});
            expect(result).toEqual({scrub: null, purge: "pending"});
            await expect.poll(() => audit.map((event) => event.kind)).toContain("deletion.pending");
            expect(secretOnDisk(database, secret)).toBeGreaterThan(0);

            reader.end();
            await expect.poll(() => audit.find((event) => event.kind === "deletion.purged")?.data, {timeout: 10_000}).toMatchObject({trigger: "timer"});
            expect(secretOnDisk(database, secret)).toBe(0);

            const another = await client.call("conversations.create", {title: "no reader this time"});
            expect(await client.call("conversations.delete", {conversationId: another.id})).toEqual({scrub: null, purge: "done"});
        });
    });
});

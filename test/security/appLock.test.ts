import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import type {CallResult} from "../../src/core/common/api/index.js";
import {connectCoreClient, createInProcessChannelPair} from "../../src/core/common/rpc/index.js";
import {openLockableCoreHost, type LockableCoreHost} from "../../src/core/node/host/openLockableCoreHost.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {derivedKeyCount, forgetDerivedKeys} from "../../src/core/node/database/keys/deriveKey.js";
import {unlockBackoffFile} from "../../src/core/node/database/keys/UnlockBackoff.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {makeTestCanary, walkFiles} from "./helpers/scanForSecrets.js";

const passphrase = "the lock test passphrase";

/** The files this process holds open (Linux /proc): a locked core must hold none of the database's. */
function openFilesOf(database: string): string[] {
    return fs.readdirSync("/proc/self/fd").flatMap((fd) => {
        try {
            const target = fs.readlinkSync(path.join("/proc/self/fd", fd));
            return target.startsWith(database) ? [target] : [];
        } catch {
            return [];
        }
    });
}

function errorCode(result: CallResult) {
    return result.ok ? null : result.error.code;
}

/** Unlocks once the back-off of a wrong passphrase before has run out (a refusal while it runs counts as no try). */
async function unlockAfterBackoff(service: LockableCoreHost["service"], given: string) {
    await expect.poll(async () => errorCode(await service.call("app.unlock", {passphrase: given})), {timeout: 10_000, interval: 100}).toBeNull();
}

/** Claim: with a passphrase the app opens locked; locked, the core holds no key, no open database and answers nothing but unlock. */
describe.skipIf(process.platform !== "linux")("the app lock (a real encrypted database, the core's service as the app and web mode call it)", () => {
    let host: LockableCoreHost | undefined;
    afterEach(async () => {
        await host?.dispose();
        host = undefined;
    });

    function protectedDatabase(label: string) {
        const dir = tempDir(label);
        const database = path.join(dir, "locked.db");
        const secret = makeTestCanary("locked");
        const db = openDatabase(database, {key: {passphrase}});
        const store = new ConversationStore(db);
        store.create({id: "diary", title: "Diary"});
        store.appendMessage("diary", {role: "user", content: `Dear diary, ${secret}`, status: "complete"});
        db.close();
        forgetDerivedKeys(); // as in a fresh process: this test derived the key to write the database
        return {dir, database, secret};
    }

    it("opens locked and refuses every call but unlock; a wrong passphrase changes nothing; the right one opens it; lock drops it all", async () => {
        const {dir, database, secret} = protectedDatabase("lock");
        host = await openLockableCoreHost({database, key: {}, idleLockMs: null, modelsDir: path.join(dir, "models")});
        const {service} = host;
        expect(host.opened).toBeNull();
        expect(await service.call("app.lockState", {})).toEqual({ok: true, value: {locked: true, passphraseSet: true, idleLockMs: null}});
        for (const [method, input] of [["conversations.list", {}], ["conversations.search", {text: "diary"}], ["settings.get", {}],
            ["chat.send", {conversationId: "diary", text: "hello"}], ["models.list", {}], ["audit.events", {}]] as const)
            expect(errorCode(await service.call(method, input)), method).toBe("STORE_LOCKED");
        expect(openFilesOf(database), "no database file open while locked").toEqual([]);
        expect(derivedKeyCount(), "no key held while locked").toBe(0);

        // The database's files: the back-off's count of wrong passphrases beside them is what a wrong one changes.
        const databaseFiles = () => walkFiles(dir).filter((file) => file !== unlockBackoffFile(database))
            .map((file) => [file, fs.readFileSync(file).toString("base64")]);
        const before = databaseFiles();
        expect(errorCode(await service.call("app.unlock", {passphrase: "not it"}))).toBe("WRONG_PASSPHRASE");
        expect(databaseFiles()).toEqual(before);
        expect(errorCode(await service.call("conversations.list", {}))).toBe("STORE_LOCKED");

        await unlockAfterBackoff(service, passphrase);
        expect(await service.call("app.unlock", {passphrase})).toEqual({ok: true, value: {locked: false}});
        const found = await service.call("conversations.search", {text: secret});
        expect(found.ok && (found.value as Array<{conversation: {id: string}}>).map((hit) => hit.conversation.id)).toEqual(["diary"]);
        expect(openFilesOf(database).length).toBeGreaterThan(0);

        expect(await service.call("app.lock", {})).toEqual({ok: true, value: {locked: true}});
        expect(errorCode(await service.call("conversations.get", {conversationId: "diary"}))).toBe("STORE_LOCKED");
        expect(openFilesOf(database), "the database closed at lock").toEqual([]);
        expect(derivedKeyCount(), "the key dropped at lock").toBe(0);
    });

    it("locks by itself after the idle time, then needs the passphrase again", async () => {
        const {dir, database} = protectedDatabase("lock-idle");
        host = await openLockableCoreHost({database, key: {passphrase}, idleLockMs: 300, modelsDir: path.join(dir, "models")});
        const {service} = host;
        expect(host.opened, "a passphrase given at start opens it").not.toBeNull();
        expect((await service.call("conversations.list", {})).ok).toBe(true);
        await expect.poll(async () => (await service.call("app.lockState", {})).ok && host!.locked(), {timeout: 10_000, interval: 100}).toBe(true);
        expect(errorCode(await service.call("conversations.list", {}))).toBe("STORE_LOCKED");
        expect(openFilesOf(database)).toEqual([]);
        expect((await service.call("app.unlock", {passphrase})).ok).toBe(true);
        expect((await service.call("conversations.list", {})).ok).toBe(true);
    });

    it("the idle lock waits for a reply that streams longer than the idle time: the reply completes, then the core locks", async () => {
        const modelPath = requireTestModel();
        if (modelPath == null)
            return;
        const {dir, database} = protectedDatabase("lock-streaming");
        const idleLockMs = 25;
        host = await openLockableCoreHost({database, key: {passphrase}, idleLockMs, modelsDir: path.join(dir, "models")});
        const {service} = host;
        expect((await service.call("model.load", {path: modelPath, remember: false})).ok).toBe(true);

        const streamed: string[] = [];
        let lockedWhileStreaming = false;
        type ReplyEnd = {status: string, timings?: {totalMs: number}};
        const finished = new Promise<ReplyEnd>((resolve) => {
            service.events.on("message.text", ({text}) => {
                streamed.push(text);
                lockedWhileStreaming ||= host!.locked();
            });
            service.events.on("turn.finished", (result) => resolve(result as never));
            service.events.on("turn.error", ({error}) => resolve({status: `error: ${error.code}`}));
        });
        const sent = await service.call("chat.send", {conversationId: "diary", text: "Once upon a time, a little fox", maxTokens: 400});
        expect(sent.ok).toBe(true);
        // Locked mid-stream, the core's events stop reaching here: that is reported as the result instead of waiting forever.
        const lockedFirst = expect.poll(() => host!.locked(), {timeout: 60_000, interval: 5}).toBe(true)
            .then((): ReplyEnd => ({status: "locked before the reply finished"}), (): ReplyEnd => ({status: "neither finished nor locked"}));
        const result = await Promise.race([finished, lockedFirst]);

        expect(result.status).toBe("complete");
        expect(result.timings!.totalMs, "the reply streamed for longer than the idle time").toBeGreaterThan(idleLockMs * 4);
        expect(lockedWhileStreaming, "not locked while the reply streamed").toBe(false);
        const assistantMessageId = sent.ok && (sent.value as {assistantMessageId: number}).assistantMessageId;
        const stored = await service.call("conversations.get", {conversationId: "diary"});
        const reply = stored.ok && (stored.value as {messages: Array<{id: number, content: string, status: string}>}).messages
            .find((message) => message.id === assistantMessageId);
        expect(reply).toMatchObject({status: "complete", content: streamed.join("")});

        await expect.poll(() => host!.locked(), {timeout: 10_000, interval: 10}).toBe(true);
        expect(errorCode(await service.call("conversations.list", {}))).toBe("STORE_LOCKED");
        await expect.poll(() => openFilesOf(database), {timeout: 10_000, interval: 10}).toEqual([]);
    });

    it("a lock mid-reply stops the reply and tells the client: turn.error STORE_LOCKED for it; what it wrote is kept", async () => {
        const modelPath = requireTestModel();
        if (modelPath == null)
            return;
        const {dir, database} = protectedDatabase("lock-mid-reply");
        host = await openLockableCoreHost({database, key: {passphrase}, idleLockMs: null, modelsDir: path.join(dir, "models")});
        const {service} = host;
        expect((await service.call("model.load", {path: modelPath, remember: false})).ok).toBe(true);
        const streamed: string[] = [];
        const errors: Array<{conversationId: string, messageId: number | null, error: {code: string, message: string}}> = [];
        let locking: Promise<CallResult> | null = null;
        service.events.on("message.text", ({text}) => {
            streamed.push(text);
            locking ??= service.call("app.lock", {}); // at the reply's first piece, long before its 400 tokens
        });
        service.events.on("turn.error", (failure) => errors.push(failure));

        const sent = await service.call("chat.send", {conversationId: "diary", text: "Once upon a time, a little fox", maxTokens: 400});
        expect(sent.ok).toBe(true);
        const assistantMessageId = sent.ok ? (sent.value as {assistantMessageId: number}).assistantMessageId : -1;
        await expect.poll(() => locking, {timeout: 60_000, interval: 5}).not.toBeNull();
        expect(await locking).toEqual({ok: true, value: {locked: true}});

        expect(errors).toEqual([{conversationId: "diary", messageId: assistantMessageId, error: expect.objectContaining({code: "STORE_LOCKED"})}]);
        expect(errors[0]!.error.message).toMatch(/locked while this reply was being generated/);
        expect((await service.call("app.unlock", {passphrase})).ok).toBe(true);
        const stored = await service.call("conversations.get", {conversationId: "diary"});
        const reply = stored.ok && (stored.value as {messages: Array<{id: number, content: string, status: string}>}).messages
            .find((message) => message.id === assistantMessageId);
        expect(reply, "the reply's message is kept").toBeTruthy();
        expect((reply as {content: string}).content.length).toBeGreaterThan(0);
    });

    it("app.setPassphrase sets, changes and removes it on the real files: a wrong current changes no byte; the passphrase is in no file", async () => {
        const dir = tempDir("lock-set");
        const database = path.join(dir, "app.db");
        const next = "the new lock passphrase";
        const snapshot = () => walkFiles(dir).map((file) => [file, fs.readFileSync(file).toString("base64")]);
        host = await openLockableCoreHost({database, key: {}, idleLockMs: null, modelsDir: path.join(dir, "models")});
        const {service} = host;
        const created = await service.call("conversations.create", {title: "Before the passphrase"});
        const conversationId = created.ok ? (created.value as {id: string}).id : "";
        expect(errorCode(await service.call("app.setPassphrase", {current: null, next: "short"})), "too short").toBe("INVALID_INPUT");

        expect(await service.call("app.setPassphrase", {current: null, next: passphrase})).toEqual({ok: true, value: {passphraseSet: true}});
        expect(await service.call("app.lockState", {})).toMatchObject({ok: true, value: {locked: false, passphraseSet: true}});
        expect(() => openDatabase(database, {key: {}}), "no longer opens without the passphrase").toThrow(expect.objectContaining({code: "PASSPHRASE_REQUIRED"}));
        expect(await service.call("app.lock", {})).toEqual({ok: true, value: {locked: true}});
        expect(errorCode(await service.call("app.unlock", {passphrase: "not it at all"}))).toBe("WRONG_PASSPHRASE");
        await unlockAfterBackoff(service, passphrase);
        const listed = await service.call("conversations.list", {});
        expect(listed.ok && (listed.value as Array<{id: string}>).map((summary) => summary.id)).toEqual([conversationId]);

        const before = snapshot();
        expect(errorCode(await service.call("app.setPassphrase", {current: "not it at all", next}))).toBe("WRONG_PASSPHRASE");
        expect(errorCode(await service.call("app.setPassphrase", {current: null, next}))).toBe("INVALID_INPUT");
        expect(snapshot(), "a refused change leaves every file byte-identical").toEqual(before);
        expect((await service.call("conversations.list", {})).ok, "and the core goes on serving").toBe(true);

        expect(await service.call("app.setPassphrase", {current: passphrase, next})).toEqual({ok: true, value: {passphraseSet: true}});
        await service.call("app.lock", {});
        expect(errorCode(await service.call("app.unlock", {passphrase})), "the old passphrase no longer opens it").toBe("WRONG_PASSPHRASE");
        await unlockAfterBackoff(service, next);

        expect(await service.call("app.setPassphrase", {current: next, next: null})).toEqual({ok: true, value: {passphraseSet: false}});
        expect(await service.call("app.lockState", {})).toEqual({ok: true, value: {locked: false, passphraseSet: false, idleLockMs: null}});
        await host.dispose();
        host = undefined;
        const reopened = openDatabase(database, {key: {}});
        expect(new ConversationStore(reopened).list().map((summary) => summary.id), "opens without one, the conversation there").toEqual([conversationId]);
        reopened.close();

        const holding = [...walkFiles(dir), ...walkFiles(process.env.CLEANROOM_HOME!)]
            .filter((file) => [passphrase, next].some((text) => fs.readFileSync(file).includes(text)));
        expect(holding, "neither passphrase is in any file").toEqual([]);
    });

    it("the idle time is an app setting, read after unlock; --lock-after overrides it", async () => {
        const {dir, database} = protectedDatabase("lock-setting");
        host = await openLockableCoreHost({database, key: {passphrase}, modelsDir: path.join(dir, "models")});
        await expect.poll(async () => (await host!.service.call("app.lockState", {})).ok && host!.service.call("app.lockState", {}))
            .toMatchObject({value: {idleLockMs: 15 * 60_000}});
        expect((await host.service.call("settings.set", {lockAfterMinutes: 0})).ok).toBe(true);
        expect(await host.service.call("app.lockState", {})).toMatchObject({ok: true, value: {idleLockMs: null}});
        await host.dispose();
        forgetDerivedKeys();

        host = await openLockableCoreHost({database, key: {}, modelsDir: path.join(dir, "models")});
        expect((await host.service.call("app.unlock", {passphrase})).ok).toBe(true);
        await expect.poll(async () => host!.service.call("app.lockState", {})).toMatchObject({value: {idleLockMs: null}});
        await host.dispose();

        host = await openLockableCoreHost({database, key: {passphrase}, idleLockMs: 60_000, modelsDir: path.join(dir, "models")});
        expect(await host.service.call("app.lockState", {})).toMatchObject({ok: true, value: {idleLockMs: 60_000}});
    });

    it("app.unlock backs off after wrong passphrases, over RPC and across a restart of the core: the right passphrase is refused unread until the wait ends", async () => {
        const {dir, database} = protectedDatabase("lock-backoff");
        const open = () => openLockableCoreHost({database, key: {}, idleLockMs: null, modelsDir: path.join(dir, "models")});
        const connect = (lockable: LockableCoreHost) => {
            const [coreSide, clientSide] = createInProcessChannelPair();
            serveCoreOverChannel(lockable.service, coreSide);
            return connectCoreClient(clientSide);
        };
        const refusal = (work: Promise<unknown>) => work.then(() => null, (error: {code: string, message: string, details: Record<string, unknown>}) =>
            ({code: error.code, message: error.message, details: error.details}));
        host = await open();
        let client = connect(host);

        expect(await refusal(client.call("app.unlock", {passphrase: "guess one"}))).toMatchObject({
            code: "WRONG_PASSPHRASE", message: expect.stringContaining("Try again in 1 s"), details: {retryAfterMs: 1000}
        });
        const early = await refusal(client.call("app.unlock", {passphrase}));
        expect(early, "the right passphrase, too soon: refused unread").toMatchObject({code: "UNLOCK_BACKOFF", details: {failures: 1}});
        expect(early!.details.retryAfterMs).toBeGreaterThan(0);
        expect(early!.details.retryAfterMs).toBeLessThanOrEqual(1000);
        expect(host.locked()).toBe(true);

        await expect.poll(() => refusal(client.call("app.unlock", {passphrase: "guess two"})), {timeout: 5000, interval: 100})
            .toMatchObject({code: "WRONG_PASSPHRASE", details: {retryAfterMs: 2000}});

        // The core ends (as when its process is killed) and starts again: the wait goes on.
        client.close();
        await host.dispose();
        host = await open();
        client = connect(host);
        const state = await client.call("app.lockState", {});
        expect(state, "the lock screen can show the wait before any try").toMatchObject({locked: true, unlockRetryAfterMs: expect.any(Number)});
        expect(state.unlockRetryAfterMs).toBeLessThanOrEqual(2000);
        expect(await refusal(client.call("app.unlock", {passphrase})), "after a restart").toMatchObject({code: "UNLOCK_BACKOFF", details: {failures: 2}});
        expect(host.locked()).toBe(true);

        await expect.poll(() => refusal(client.call("app.unlock", {passphrase})), {timeout: 10_000, interval: 100}).toBeNull();
        expect(host.locked()).toBe(false);
        expect(fs.existsSync(unlockBackoffFile(database)), "the right passphrase resets it").toBe(false);
        expect(await client.call("app.lockState", {})).not.toHaveProperty("unlockRetryAfterMs");
        await client.call("app.lock", {});
        expect(await refusal(client.call("app.unlock", {passphrase: "guess three"})), "doubling starts again from 1 s")
            .toMatchObject({code: "WRONG_PASSPHRASE", details: {retryAfterMs: 1000}});
        client.close();
    });

    it("a database without a passphrase is never locked, and app.lock says why it cannot lock", async () => {
        const dir = tempDir("lock-none");
        host = await openLockableCoreHost({database: path.join(dir, "open.db"), key: {}, modelsDir: path.join(dir, "models")});
        expect(await host.service.call("app.lockState", {})).toEqual({ok: true, value: {locked: false, passphraseSet: false, idleLockMs: null}});
        const refused = await host.service.call("app.lock", {});
        expect(!refused.ok && refused.error).toMatchObject({code: "INVALID_INPUT", message: expect.stringContaining("No passphrase is set")});
    });
});

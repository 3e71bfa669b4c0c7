import {spawn} from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {cliCommand, runCliCapturing} from "../../tools/spawnCli.js";
import {coreProcessEnv} from "../../src/core/common/coreProcessEnv.js";
import {openKeyedDatabase} from "../../src/core/node/database/keys/openKeyedDatabase.js";
import {openLockableCoreHost} from "../../src/core/node/host/openLockableCoreHost.js";
import {DatabaseLock} from "../../src/core/node/database/lock/DatabaseLock.js";
import {migrations} from "../../src/core/node/database/migrations.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {watchOutput, type WatchedOutput} from "../helpers/watchOutput.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const oldPassphrase = "the passphrase before, long enough";
const newPassphrase = "the passphrase after, long enough";

type Chat = WatchedOutput & {pid: number, say: (line: string) => Promise<void>, quit: () => Promise<number | null>};

/** An interactive `cleanroom chat` on `db` (conversation "talk"), driven line by line through its stdin; each `say` resolves when the reply is done and the next prompt shows. */
async function startChat(env: NodeJS.ProcessEnv, db: string): Promise<Chat> {
    const {command, args} = cliCommand(["chat", "--model", modelPath!, "--db", db, "--conversation", "talk", "--threads", "1",
        "--max-tokens", "8", "--temperature", "0"]);
    const child = spawn(command, args, {env: {...coreProcessEnv, ...env}, stdio: ["pipe", "pipe", "pipe"]});
    const watched = watchOutput(child);
    await watched.waitFor(/you> /);
    return {
        ...watched,
        pid: child.pid!,
        say: async (line) => {
            const from = watched.output().length;
            child.stdin.write(`${line}\n`);
            await watched.waitFor(/assistant> [^]*you> /, {from});
        },
        quit: () => {
            child.stdin.end("/quit\n");
            return watched.exited;
        }
    };
}

const setPassphrase = (env: NodeJS.ProcessEnv, db: string, extra: string[] = []) =>
    runCliCapturing(["passphrase", "set", "--db", db, ...extra], {env: {...env, CLEANROOM_NEW_PASSPHRASE: newPassphrase}});

/** `passphrase set` that must go through (nothing else holds the database). */
async function setPassphraseNow(env: NodeJS.ProcessEnv, db: string) {
    const set = await setPassphrase(env, db);
    expect(set.code, set.stderr).toBe(0);
}

/** Both turns of a chat that said "Once upon a time", then "The cat sat", each stored whole. */
function expectBothTurns(messages: Array<{role: string, status: string, content: string}>) {
    expect(messages.map((message) => [message.role, message.status])).toEqual([["user", "complete"], ["assistant", "complete"], ["user", "complete"], ["assistant", "complete"]]);
    expect(messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual(["Once upon a time", "The cat sat"]);
}

function sha256(file: string) {
    return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

async function messagesOf(env: NodeJS.ProcessEnv, db: string, passphrase: string) {
    const shown = await runCliCapturing(["conversations", "show", "talk", "--db", db, "--json"], {env: {...env, CLEANROOM_PASSPHRASE: passphrase}});
    expect(shown.code, shown.stderr).toBe(0);
    return (JSON.parse(shown.stdout) as {messages: Array<{role: string, status: string, content: string}>}).messages;
}

function inUseError(stderr: string) {
    return (JSON.parse(stderr) as {error: {code: string, message: string, details: {pid: number | null}}}).error;
}

/** Claim: one process at a time may switch the database (re-key, wipe, migrate); it is refused, with nothing changed, while another Cleanroom process holds the database open. */
describe.skipIf(modelPath == null)("one writer at a time: switches refused while another Cleanroom process holds the database (real CLI processes)", () => {
    it("passphrase set beside a running chat is refused (DATABASE_IN_USE, exit 1, the chat's pid), nothing changes, and the chat goes on storing", async () => {
        const env = hermeticCliEnv("one-writer-rekey", {CLEANROOM_PASSPHRASE: oldPassphrase});
        const chat = await startChat(env.env, env.db);
        await chat.say("Once upon a time");
        const keyFile = sha256(`${env.db}-key.json`);

        const refused = await setPassphrase(env.env, env.db, ["--json"]);
        expect(refused.code).toBe(1);
        const error = inUseError(refused.stderr);
        expect(error.code).toBe("DATABASE_IN_USE");
        expect(error.details.pid).toBe(chat.pid);
        expect(error.message).toContain(`pid ${chat.pid}: cleanroom.cjs chat`);
        expect(error.message).toMatch(/has it open\. Nothing was changed\. Close that process first/);
        expect(sha256(`${env.db}-key.json`), "the key file is byte-identical").toBe(keyFile);
        expect(fs.readdirSync(path.dirname(env.db)).filter((name) => /\.(rekey|replaced)|key\.next/.test(name))).toEqual([]);

        await chat.say("The cat sat");
        expect(await chat.quit()).toBe(0);
        expect(chat.output()).toMatch(/Session ended: \d+ KV cells zeroed/);
        expect(chat.output()).not.toMatch(/SQLITE_|NOTADB/);
        expectBothTurns(await messagesOf(env.env, env.db, oldPassphrase));

        // The chat gone, the same command goes through.
        await setPassphraseNow(env.env, env.db);
        expect(await messagesOf(env.env, env.db, newPassphrase)).toHaveLength(4);
    });

    it("wipe --yes beside a running chat is refused, every file stays, and the chat's next message is stored", async () => {
        const env = hermeticCliEnv("one-writer-wipe", {CLEANROOM_PASSPHRASE: oldPassphrase});
        const chat = await startChat(env.env, env.db);
        await chat.say("Once upon a time");
        const keyFile = sha256(`${env.db}-key.json`);

        const refused = await runCliCapturing(["wipe", "--db", env.db, "--yes"], {env: env.env});
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(`Cannot wipe ${env.db}: another Cleanroom process (pid ${chat.pid}: cleanroom.cjs chat) has it open.`);
        expect(refused.stderr).toMatch(/\[DATABASE_IN_USE\]\n$/);
        expect(refused.stdout, "nothing reported removed").toBe("");
        expect(fs.existsSync(env.db)).toBe(true);
        expect(sha256(`${env.db}-key.json`)).toBe(keyFile);

        await chat.say("The cat sat");
        expect(await chat.quit()).toBe(0);
        expect(chat.output()).toMatch(/Session ended: \d+ KV cells zeroed/);
        expectBothTurns(await messagesOf(env.env, env.db, oldPassphrase));

        const wiped = await runCliCapturing(["wipe", "--db", env.db, "--yes"], {env: env.env});
        expect(wiped.code, wiped.stderr).toBe(0);
        expect(fs.readdirSync(path.dirname(env.db)).filter((name) => name.startsWith("cli.db")), "the lock files go too").toEqual([]);
    });

    it("while another process is switching the database, a chat and a re-key are refused, naming it; once it is done both work", async () => {
        const env = hermeticCliEnv("one-writer-switching", {CLEANROOM_PASSPHRASE: oldPassphrase});
        expect((await runCliCapturing(["conversations", "list", "--db", env.db], {env: env.env})).code).toBe(0);
        // This test process is the one switching: it holds the exclusive lock a re-key or wipe holds.
        const chatCode = await DatabaseLock.of(env.db).exclusivelyAsync("test", async () => {
            const rekey = await setPassphrase(env.env, env.db);
            expect(rekey.code).toBe(1);
            expect(rekey.stderr).toContain(`Cannot set the passphrase of ${env.db}: another Cleanroom process (pid ${process.pid}`);
            expect(rekey.stderr).toMatch(/is re-keying, wiping or migrating it right now\. Nothing was changed\. Try again when it has finished\. \[DATABASE_IN_USE\]/);

            const started = Date.now();
            const chat = await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--prompt", "Once upon a time", "--max-tokens", "4", "--threads", "1", "--json"], {env: env.env});
            expect(inUseError(chat.stderr)).toMatchObject({code: "DATABASE_IN_USE", details: {pid: process.pid}, message: expect.stringContaining(`Cannot open ${env.db}`)});
            expect(Date.now() - started, "it waited for the switch to end first").toBeGreaterThanOrEqual(5_000);
            return chat.code;
        });
        expect(chatCode).toBe(1);

        const chat = await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--conversation", "talk", "--prompt", "Once upon a time", "--max-tokens", "4", "--threads", "1", "--json"], {env: env.env});
        expect(chat.code, chat.stderr).toBe(0);
        await setPassphraseNow(env.env, env.db);
        expect(await messagesOf(env.env, env.db, newPassphrase)).toHaveLength(2);
    });

    it("kill -9 of the chat holding the database releases it: passphrase set then succeeds and nothing committed before the kill is lost", async () => {
        const env = hermeticCliEnv("one-writer-kill", {CLEANROOM_PASSPHRASE: oldPassphrase});
        const chat = await startChat(env.env, env.db);
        await chat.say("Once upon a time");
        await chat.say("The cat sat");
        expect((await setPassphrase(env.env, env.db)).code, "held while the chat runs").toBe(1);

        process.kill(chat.pid, "SIGKILL");
        await chat.exited;
        await setPassphraseNow(env.env, env.db);
        expectBothTurns(await messagesOf(env.env, env.db, newPassphrase));
    });

    it("a schema migration needs the database alone: refused while another process holds it, the schema untouched; done once it is closed", async () => {
        const env = hermeticCliEnv("one-writer-migrate", {CLEANROOM_PASSPHRASE: oldPassphrase});
        // An encrypted database one migration behind this build.
        const {db: old} = openKeyedDatabase(env.db, {passphrase: oldPassphrase}, false);
        old.pragma("journal_mode = WAL");
        for (const [index, migrate] of migrations.slice(0, -1).entries()) {
            migrate(old);
            old.pragma(`user_version = ${index + 1}`);
        }
        old.close();
        const schemaVersion = () => {
            const {db} = openKeyedDatabase(env.db, {passphrase: oldPassphrase}, true);
            try {
                return db.pragma("user_version", {simple: true}) as number;
            } finally {
                db.close();
            }
        };
        expect(schemaVersion()).toBe(migrations.length - 1);

        // This test process holds the database open, as a running chat or app does.
        const release = DatabaseLock.of(env.db).hold();
        let refused;
        try {
            refused = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env});
        } finally {
            release();
        }
        expect(refused.code).toBe(1);
        expect(inUseError(refused.stderr)).toMatchObject({code: "DATABASE_IN_USE", details: {pid: process.pid},
            message: expect.stringContaining(`Cannot create, encrypt or migrate the schema of ${env.db}: another Cleanroom process (pid ${process.pid}`)});
        expect(schemaVersion(), "not migrated").toBe(migrations.length - 1);

        const listed = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env});
        expect(listed.code, listed.stderr).toBe(0);
        expect(schemaVersion()).toBe(migrations.length);
    });

    it("four processes opening a new database at once all get it: one creates it with the database to itself, the others wait for it", async () => {
        const env = hermeticCliEnv("one-writer-create", {CLEANROOM_PASSPHRASE: oldPassphrase});
        const runs = await Promise.all([1, 2, 3, 4].map(() => runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env})));
        expect(runs.map((run) => [run.code, run.stderr])).toEqual([[0, ""], [0, ""], [0, ""], [0, ""]]);
        expect(runs.map((run) => JSON.parse(run.stdout) as unknown)).toEqual(Array(4).fill({conversations: []}));
        expect((await runCliCapturing(["conversations", "list", "--db", env.db], {env: env.env})).code, "and it opens again, under its one key").toBe(0);
    });

    it("the app's Settings (web mode's core in this process): set passphrase and Delete everything are refused beside a chat in another process, the core goes on; alone, both work", async () => {
        const env = hermeticCliEnv("one-writer-app", {CLEANROOM_PASSPHRASE: ""});
        const host = await openLockableCoreHost({database: env.db, key: {}, idleLockMs: null, modelsDir: path.join(env.home, "models")});
        try {
            const {service} = host;
            expect((await service.call("conversations.create", {title: "Kept in the app"})).ok).toBe(true);
            const chat = await startChat(env.env, env.db);
            await chat.say("Once upon a time");
            const keyFile = sha256(`${env.db}-key.json`);

            const set = await service.call("app.setPassphrase", {current: null, next: newPassphrase});
            expect(set.ok ? null : set.error).toMatchObject({code: "DATABASE_IN_USE", details: {pid: chat.pid},
                message: expect.stringContaining(`Cannot set the passphrase of ${env.db}: another Cleanroom process (pid ${chat.pid}: cleanroom.cjs chat) has it open.`)});
            expect(sha256(`${env.db}-key.json`)).toBe(keyFile);
            expect(await service.call("app.lockState", {})).toMatchObject({ok: true, value: {locked: false, passphraseSet: false}});
            const deleted = await service.call("app.deleteEverything", {confirm: "delete everything"});
            expect(deleted.ok ? null : deleted.error).toMatchObject({code: "DATABASE_IN_USE", details: {pid: chat.pid}});
            const listed = await service.call("conversations.list", {});
            expect(listed.ok && (listed.value as Array<{title: string}>).map((summary) => summary.title).sort(), "nothing deleted, the core still answers")
                .toEqual(["Kept in the app", "Terminal chat"]);

            await chat.say("The cat sat");
            expect(await chat.quit()).toBe(0);
            expectBothTurns(await messagesOf(env.env, env.db, ""));

            // This process alone: both go through, the core running on (as before this change).
            expect(await service.call("app.setPassphrase", {current: null, next: newPassphrase})).toEqual({ok: true, value: {passphraseSet: true}});
            const wiped = await service.call("app.deleteEverything", {confirm: "delete everything"});
            expect(wiped.ok, JSON.stringify(wiped)).toBe(true);
            expect(await service.call("conversations.list", {})).toEqual({ok: true, value: []});
        } finally {
            await host.dispose();
        }
    });
});

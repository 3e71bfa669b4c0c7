import {spawn} from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import {describe, expect, it} from "vitest";
import {cliCommand, runCliCapturing} from "../../tools/spawnCli.js";
import {migrations} from "../../src/core/node/database/migrations.js";
import {unlockBackoffFile} from "../../src/core/node/database/keys/UnlockBackoff.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {databaseFiles, makeTestCanary, scanForSecrets, walkFiles, type ScanSource} from "./helpers/scanForSecrets.js";
import {decryptedCopy} from "./helpers/decryptedCopy.js";

const modelPath = requireTestModel();
const passphrase = "a long test passphrase, not a real one";

/** Every file of the run: the database and its WAL, shm and journal, the app folder, the temp folder (a spilled temp file would be there). */
function everyFile(env: ReturnType<typeof hermeticCliEnv>): ScanSource[] {
    return [...databaseFiles(env.db), ...[...walkFiles(env.home), ...walkFiles(env.tmp), ...walkFiles(path.dirname(env.db))]
        .filter((file) => !databaseFiles(env.db).some((source) => source.kind === "file" && source.path === file))
        .map((file) => ({kind: "file" as const, path: file}))];
}

function findings(sources: ScanSource[], secret: string) {
    return scanForSecrets(sources, [{label: "secret", value: secret}]).findings;
}

/** Names, sizes and SHA-256 of every file in a folder: to show that a refused open changed nothing. */
function folderState(dir: string) {
    return walkFiles(dir).sort().map((file) => `${path.basename(file)} ${fs.statSync(file).size} ${crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")}`);
}

async function waitFor<T>(probe: () => T | null | undefined, what: string, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = probe();
        if (value != null)
            return value;
        if (Date.now() > deadline)
            throw new Error(`Timed out waiting for ${what}.`);
        await new Promise((resolve) => setTimeout(resolve, 2));
    }
}

/** Claim: what the store holds about conversations is encrypted at rest, in every file SQLite writes, through real turns, crashes and migrations. */
describe.skipIf(modelPath == null)("private at rest (real CLI processes, real model, real files)", () => {
    it("a secret sent through a turn is in no byte of the database, WAL, shm or any other file; search finds it after reopen", async () => {
        const env = hermeticCliEnv("at-rest-turn", {CLEANROOM_PASSPHRASE: passphrase});
        const secret = makeTestCanary("turn");
        // The title comes from the first prompt; the secret is in the second turn's message only.
        for (const prompt of ["Once upon a time", `Remember ${secret} for me. Once upon a time`]) {
            const turn = await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--conversation", "private-notes",
                "--prompt", prompt, "--max-tokens", "24", "--temperature", "0", "--threads", "1", "--json"], {env: env.env});
            expect(turn.code, turn.stderr).toBe(0);
        }

        expect(findings(everyFile(env), secret)).toEqual([]);
        // Control: the same text is there for whoever holds the key (else the scan proves nothing).
        expect(findings([{kind: "file", path: decryptedCopy(env.db, tempDir("at-rest-control"), {passphrase})}], secret).length).toBeGreaterThan(0);

        const search = await runCliCapturing(["conversations", "search", secret, "--db", env.db, "--json"], {env: env.env});
        expect(search.code, search.stderr).toBe(0);
        const {hits} = JSON.parse(search.stdout) as {hits: Array<{conversation: {id: string}, matchedIn: string, snippet: string}>};
        expect(hits.map((hit) => [hit.conversation.id, hit.matchedIn])).toEqual([["private-notes", "message"]]);
        expect(hits[0]!.snippet, "the match is marked").toMatch(/\[[^\]]+\]/);
        const byWord = await runCliCapturing(["conversations", "search", "remember for", "--db", env.db], {env: env.env});
        expect(byWord.stdout).toMatch(/private-notes .*message/);
        expect(findings(everyFile(env), secret), "searching wrote nothing in the clear").toEqual([]);
    }, 120_000);

    it("a wrong passphrase, or none, is a clear error (exit 1) and changes no byte on disk", async () => {
        const env = hermeticCliEnv("at-rest-wrong", {CLEANROOM_PASSPHRASE: passphrase});
        expect((await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--prompt", "Once upon a time", "--max-tokens", "4",
            "--threads", "1", "--json"], {env: env.env})).code).toBe(0);
        const before = folderState(path.dirname(env.db));

        const wrong = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: {...env.env, CLEANROOM_PASSPHRASE: "not the passphrase"}});
        expect(wrong.code).toBe(1);
        expect(JSON.parse(wrong.stderr).error).toMatchObject({code: "WRONG_PASSPHRASE", message: expect.stringContaining("Nothing was changed on disk")});
        const none = await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--prompt", "Hello", "--threads", "1"], {env: {...env.env, CLEANROOM_PASSPHRASE: ""}});
        expect(none.code).toBe(1);
        expect(none.stderr).toMatch(/is protected by a passphrase: set CLEANROOM_PASSPHRASE.*\[PASSPHRASE_REQUIRED\]/);
        expect(folderState(path.dirname(env.db))).toEqual(before);

        const right = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env});
        expect(JSON.parse(right.stdout).conversations).toHaveLength(1);
    }, 120_000);

    it("a passphrase set, changed and removed re-keys the database: only the current key opens it, nothing lost", async () => {
        const env = hermeticCliEnv("at-rest-rekey", {CLEANROOM_PASSPHRASE: ""});
        const secret = makeTestCanary("rekey");
        expect((await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--conversation", "kept", "--prompt", `Keep ${secret}`,
            "--max-tokens", "4", "--threads", "1", "--json"], {env: env.env})).code).toBe(0);
        const list = (passphraseNow: string) => runCliCapturing(["conversations", "search", secret, "--db", env.db, "--json"], {env: {...env.env, CLEANROOM_PASSPHRASE: passphraseNow}});

        expect((await runCliCapturing(["passphrase", "set", "--db", env.db], {env: {...env.env, CLEANROOM_NEW_PASSPHRASE: "first passphrase"}})).code).toBe(0);
        expect((await list("")).code).toBe(1);
        expect(JSON.parse((await list("first passphrase")).stdout).hits).toHaveLength(1);
        const changed = await runCliCapturing(["passphrase", "set", "--db", env.db], {env: {...env.env, CLEANROOM_PASSPHRASE: "first passphrase", CLEANROOM_NEW_PASSPHRASE: "second passphrase"}});
        expect(changed.code, changed.stderr).toBe(0);
        expect(JSON.parse((await list("first passphrase")).stderr).error.code).toBe("WRONG_PASSPHRASE");
        expect(JSON.parse((await list("second passphrase")).stdout).hits).toHaveLength(1);
        expect(fs.readFileSync(`${env.db}-key.json`, "utf8"), "the key file holds the salt, never the passphrase or key").not.toContain("second");
        expect((await runCliCapturing(["passphrase", "remove", "--db", env.db], {env: {...env.env, CLEANROOM_PASSPHRASE: "second passphrase"}})).code).toBe(0);
        expect(JSON.parse((await list("")).stdout).hits).toHaveLength(1);
        expect(findings(everyFile(env), secret)).toEqual([]);
    }, 120_000);

    it("kill -9 mid-turn: no byte of the secret in any file at the kill, and the reopened database keeps the partial reply", async () => {
        const env = hermeticCliEnv("at-rest-kill", {CLEANROOM_PASSPHRASE: passphrase});
        const secret = makeTestCanary("kill");
        const {command, args} = cliCommand(["chat", "--model", modelPath!, "--db", env.db, "--conversation", "killed", "--threads", "1",
            "--context-size", "2048", "--prompt", `My secret is ${secret}. Tell me a very long story about a girl and her cat.`,
            "--max-tokens", "1500", "--temperature", "0.9", "--seed", "7", "--json"]);
        const child = spawn(command, args, {stdio: "ignore", env: env.env});
        const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
        // The test holds the passphrase too: it watches through its own connection until the reply grows.
        const reader = await waitFor(() => {
            try {
                return fs.existsSync(`${env.db}-key.json`) ? openDatabase(env.db, {readonly: true, key: {passphrase}}) : null;
            } catch {
                return null; // still being created
            }
        }, "the database");
        await waitFor(() => {
            try {
                return (reader.prepare("SELECT content FROM messages WHERE status = 'streaming' AND content != ''").get() as {content: string} | undefined)?.content;
            } catch {
                return null;
            }
        }, "a growing reply");
        child.kill("SIGKILL");
        await exited;
        reader.close();

        expect(findings(everyFile(env), secret), "at the kill").toEqual([]);
        const shown = await runCliCapturing(["conversations", "show", "killed", "--db", env.db, "--json"], {env: env.env});
        expect(shown.code, shown.stderr).toBe(0);
        const {messages} = JSON.parse(shown.stdout) as {messages: Array<{role: string, status: string, content: string}>};
        expect(messages[0]).toMatchObject({role: "user", status: "complete", content: expect.stringContaining(secret)});
        expect(messages[1]).toMatchObject({role: "assistant", status: "interrupted"});
        expect(findings(everyFile(env), secret), "after the reopen").toEqual([]);
    }, 180_000);

    it("a plain database from before is encrypted in place; kill -9 mid-migration loses nothing and leaves no plain copy", async () => {
        const env = hermeticCliEnv("at-rest-migrate", {CLEANROOM_PASSPHRASE: passphrase});
        const secret = makeTestCanary("plain");
        // A plain database of the three migrations before encryption, large enough that its migration takes a while.
        const plain = new Database(env.db);
        plain.pragma("journal_mode = WAL");
        for (const [index, migrate] of migrations.slice(0, 3).entries()) {
            migrate(plain);
            plain.pragma(`user_version = ${index + 1}`);
        }
        const insert = plain.prepare("INSERT INTO messages (conversation_id, role, content, status, created_at, updated_at) VALUES (?, 'user', ?, 'complete', 1, 1)");
        plain.transaction(() => {
            for (let conversation = 0; conversation < 40; conversation++) {
                plain.prepare("INSERT INTO conversations VALUES (?, ?, 'local', '{}', 1, 1)").run(`old-${conversation}`, `Old ${conversation}`);
                for (let message = 0; message < 100; message++)
                    insert.run(`old-${conversation}`, `${secret} ${conversation}/${message} ` + "story ".repeat(500));
            }
        })();
        plain.close();
        expect(findings(databaseFiles(env.db), secret).length, "plain before").toBeGreaterThan(0);

        // Killed while it writes the encrypted copy: the plain database must still be whole, the copy hold nothing in the clear.
        const {command, args} = cliCommand(["conversations", "list", "--db", env.db, "--json"]);
        const child = spawn(command, args, {stdio: "ignore", env: env.env});
        const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
        const encrypting = `${env.db}.encrypting`;
        await waitFor(() => (fs.statSync(encrypting, {throwIfNoEntry: false})?.size ?? 0) > 0 ? true : null, "the encrypted copy", 120_000);
        child.kill("SIGKILL");
        await exited;
        const leftovers = walkFiles(path.dirname(env.db)).filter((file) => file.startsWith(encrypting));
        expect(findings(leftovers.map((file) => ({kind: "file", path: file})), secret), "the half-written copy").toEqual([]);

        const listed = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env});
        expect(listed.code, listed.stderr).toBe(0);
        const {conversations} = JSON.parse(listed.stdout) as {conversations: Array<{id: string, messageCount: number}>};
        expect(conversations).toHaveLength(40);
        expect(conversations.every((conversation) => conversation.messageCount === 100)).toBe(true);
        expect(findings(everyFile(env), secret), "after the migration, in every file").toEqual([]);
        expect(fs.readdirSync(path.dirname(env.db)).filter((name) => /\.(encrypting|replaced|rekey)/.test(name))).toEqual([]);
        const found = await runCliCapturing(["conversations", "search", `${secret} 7/42`, "--db", env.db, "--json"], {env: env.env});
        expect((JSON.parse(found.stdout) as {hits: Array<{conversation: {id: string}}>}).hits.map((hit) => hit.conversation.id)).toEqual(["old-7"]);
    }, 300_000);

    it("chat --incognito writes nothing: no database, no WAL, no file holding its text, and says so", async () => {
        const env = hermeticCliEnv("at-rest-incognito", {CLEANROOM_PASSPHRASE: ""});
        const secret = makeTestCanary("incognito");
        // Its document (#23) too lives only in memory; the file itself sits outside the folders scanned.
        const document = path.join(tempDir("at-rest-incognito-document"), "private.txt");
        fs.writeFileSync(document, `The private document names ${secret}.`);
        const run = await runCliCapturing(["chat", "--incognito", "--model", modelPath!, "--prompt", `Forget ${secret}. Once upon a time`,
            "--attach", document, "--max-tokens", "16", "--threads", "1", "--json"], {env: env.env});
        expect(run.code, run.stderr).toBe(0);
        const result = JSON.parse(run.stdout) as {incognito: boolean, isolation: {scrub: {verified: boolean}}};
        expect(result.incognito).toBe(true);
        expect((result as unknown as {attachments: Array<{name: string}>}).attachments.map((attachment) => attachment.name)).toEqual(["private.txt"]);
        expect(result.isolation.scrub.verified, "its context scrubbed like any other").toBe(true);
        expect(walkFiles(env.home).filter((file) => /\.db/.test(file)), "no database in the app folder").toEqual([]);
        expect(findings(everyFile(env), secret)).toEqual([]);

        const text = await runCliCapturing(["chat", "--incognito", "--model", modelPath!, "--prompt", "Hello", "--max-tokens", "4", "--threads", "1"], {env: env.env});
        expect(text.stderr).toMatch(/^Incognito: nothing of this chat is written to disk/);
        const refused = await runCliCapturing(["chat", "--incognito", "--conversation", "x", "--model", modelPath!, "--prompt", "Hi"], {env: env.env});
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/--incognito keeps nothing on disk/);
    }, 120_000);

    it("cleanroom wipe removes every trace, keeps the model files unless asked, and shows each path it checked", async () => {
        const env = hermeticCliEnv("at-rest-wipe", {CLEANROOM_PASSPHRASE: passphrase});
        const secret = makeTestCanary("wipe");
        const modelsDir = path.join(env.home, "models");
        fs.mkdirSync(modelsDir, {recursive: true});
        fs.copyFileSync(modelPath!, path.join(modelsDir, "tiny.gguf"));
        expect((await runCliCapturing(["models", "import", path.join(modelsDir, "tiny.gguf"), "--json"], {env: env.env})).code).toBe(0);
        const document = path.join(tempDir("at-rest-wipe-document"), "contract.txt");
        fs.writeFileSync(document, Array.from({length: 300}, (_, line) => `Clause ${line}: ${secret} stays in this room.`).join("\n"));
        expect((await runCliCapturing(["chat", "--model", modelPath!, "--db", env.db, "--prompt", `Wipe ${secret}`, "--attach", document, "--max-tokens", "8",
            "--threads", "1", "--json"], {env: env.env})).code).toBe(0);
        expect(fs.existsSync(path.join(modelsDir, "registry.json"))).toBe(true);

        const refused = await runCliCapturing(["wipe", "--db", env.db], {env: env.env});
        expect(refused.code).toBe(1);
        expect(fs.existsSync(env.db), "nothing deleted without --yes").toBe(true);

        // Wrong passphrases at the app's lock screen leave their count beside the database: wipe removes it too.
        fs.writeFileSync(unlockBackoffFile(env.db), JSON.stringify({failures: 2, retryAt: Date.now() + 2000}), {mode: 0o600});
        const wiped = await runCliCapturing(["wipe", "--db", env.db, "--yes", "--json"], {env: env.env});
        expect(wiped.code, wiped.stderr).toBe(0);
        const report = JSON.parse(wiped.stdout) as {clean: boolean, modelFilesKept: number, checks: Array<{path: string, removed: boolean, remains: boolean}>};
        expect(report.clean).toBe(true);
        expect(report.modelFilesKept).toBe(1);
        expect(report.checks.filter((check) => check.removed).map((check) => path.basename(check.path)).sort())
            .toEqual(expect.arrayContaining(["cli.db", "cli.db-key.json", "cli.db.unlock-backoff", "registry.json"]));
        expect(fs.readdirSync(path.dirname(env.db)).filter((name) => name.startsWith("cli.db"))).toEqual([]);
        expect(fs.existsSync(path.join(modelsDir, "tiny.gguf")), "the model file is the user's: kept").toBe(true);
        expect(findings(everyFile(env), secret)).toEqual([]);

        const text = await runCliCapturing(["wipe", "--db", env.db, "--yes", "--models"], {env: env.env});
        expect(text.stdout).toMatch(/removed {2}.*tiny\.gguf/);
        expect(text.stdout).toMatch(/Checked \d+ paths: nothing remains\./);
        expect(fs.existsSync(path.join(modelsDir, "tiny.gguf"))).toBe(false);
        const listed = await runCliCapturing(["conversations", "list", "--db", env.db, "--json"], {env: env.env});
        expect(JSON.parse(listed.stdout)).toEqual({conversations: []});
    }, 120_000);
});

import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import type {SecretVault} from "../../src/core/common/secrets.js";
import {keychainStoreKey} from "../../src/core/node/secrets/keychainStoreKey.js";
import {ConversationStore} from "../../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {makeTestCanary, scanForSecrets, walkFiles} from "./helpers/scanForSecrets.js";

/** A vault double that says it is the OS keychain, as main's KeyVault (Electron safeStorage) does: Electron cannot run in this CI. */
function keychainDouble(storage = "os-keychain (gnome-libsecret)"): SecretVault & {secrets: Map<string, string>} {
    const secrets = new Map<string, string>();
    return {
        storage, warning: null, secrets,
        has: async (name) => secrets.has(name),
        read: async (name) => secrets.get(name) ?? null,
        write: async (name, value) => void (value == null ? secrets.delete(name) : secrets.set(name, value))
    };
}

/** Claim: the desktop app's database key is random and kept only by the OS keychain; no file beside the database holds it. */
describe("the app's keychain-wrapped database key (Electron safeStorage stood in for by a vault double: Electron cannot run here)", () => {
    it("is made once and kept in the keychain; the database opens with it, its key file names the keychain and holds no key", async () => {
        const vault = keychainDouble();
        const key = await keychainStoreKey(vault);
        expect(key?.length).toBe(32);
        expect(await keychainStoreKey(vault), "the same key on the next start").toEqual(key);

        const {env, db} = hermeticCliEnv("keychain-key", {CLEANROOM_PASSPHRASE: ""});
        const secret = makeTestCanary("keychain");
        const database = openDatabase(db, {key: {keychainKey: key!}});
        const store = new ConversationStore(database);
        store.create({id: "app-only", title: "From the app"});
        store.appendMessage("app-only", {role: "user", content: secret, status: "complete"});
        database.close();

        expect(JSON.parse(fs.readFileSync(`${db}-key.json`, "utf8"))).toEqual({version: 1, mode: "keychain"});
        const hex = key!.toString("hex");
        const files = walkFiles(path.dirname(db)).map((file) => ({kind: "file" as const, path: file}));
        expect(scanForSecrets(files, [{label: "secret", value: secret}, {label: "key", value: hex}]).findings).toEqual([]);

        // The CLI has no keychain: it says why it cannot open the app's database, and changes nothing.
        const cli = await runCliCapturing(["conversations", "list", "--db", db, "--json"], {env});
        expect(cli.code).toBe(1);
        expect(JSON.parse(cli.stderr).error).toMatchObject({code: "STORE_KEY_UNAVAILABLE", message: expect.stringContaining("OS keychain")});
        const reopened = openDatabase(db, {key: {keychainKey: key!}});
        expect(new ConversationStore(reopened).messages("app-only").map((message) => message.content)).toEqual([secret]);
        reopened.close();
    }, 60_000);

    it("is not made where the vault is no real keychain (basic_text obfuscation, memory): the key file beside the database is used then", async () => {
        expect(await keychainStoreKey(keychainDouble("basic_text"))).toBeNull();
        expect(await keychainStoreKey(keychainDouble("memory"))).toBeNull();
    });
});

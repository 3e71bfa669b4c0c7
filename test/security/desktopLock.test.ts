import {fork, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {connectCoreClient, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import type {RpcChannel} from "../../src/core/common/rpc/index.js";
import {secretNames} from "../../src/core/node/settings/settingKeys.js";
import {tempDir} from "../helpers/tempCore.js";
import {testBuildScript} from "../helpers/testBuild.js";
import {makeTestCanary, walkFiles} from "./helpers/scanForSecrets.js";

/** Compiled in the test build (testBuild.ts): no tsx in the core process nor in node-llama-cpp's binding check forked from it. */
const standInPath = await testBuildScript("utilityEntryStandIn");
const passphrase = "the desktop lock passphrase";

type DesktopCore = {client: ConnectedCoreClient, child: ChildProcess, saidLocked: () => boolean, stop(): Promise<void>};

/** The app's core process (utilityEntry) under Node, Electron's parent port and key vault stood in for (see utilityEntryStandIn.ts). */
function startDesktopCore(database: string, vaultFile: string): DesktopCore {
    const child = fork(standInPath, ["--db", database, "--key-storage", "os-keychain (stand-in)"], {
        execArgv: [], env: {...process.env, STAND_IN_VAULT_FILE: vaultFile}, serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"]
    });
    let saidLocked = false;
    child.on("message", (message: {locked?: true}) => saidLocked ||= message.locked === true);
    const channel: RpcChannel = {
        post: (message) => void child.send({rpc: message}),
        onMessage(listener) {
            const handler = (message: {rpc?: unknown}) => "rpc" in message && listener(message.rpc);
            child.on("message", handler);
            return () => child.off("message", handler);
        },
        onClose(listener) {
            child.on("exit", listener);
            return () => child.off("exit", listener);
        }
    };
    const client = connectCoreClient(channel);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return {
        client, child, saidLocked: () => saidLocked, async stop() {
            if (child.exitCode == null) {
                child.send({shutdown: true});
                const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
                await exited;
                clearTimeout(killer);
            }
            client.close();
        }
    };
}

async function errorCodeOf(call: Promise<unknown>) {
    return await call.then(() => null, (error: {code?: string}) => error.code ?? String(error));
}

const envelopeOf = (database: string) => JSON.parse(fs.readFileSync(`${database}-key.json`, "utf8")) as {mode: string};
const vaultOf = (vaultFile: string) => JSON.parse(fs.readFileSync(vaultFile, "utf8")) as Record<string, string>;

/** Claim: the desktop app opens locked with a passphrase, and unlocks as web mode does; without one it keeps the keychain-wrapped key. */
describe.skipIf(process.platform !== "linux")("the desktop core process (utilityEntry under Node: Electron's parent port and keychain vault are stand-ins)", () => {
    let core: DesktopCore | undefined;
    afterEach(async () => {
        await core?.stop();
        core = undefined;
    });

    it("stand-in keychain: opens on the keychain key; a passphrase set in Settings makes it open locked on the next start; removed, a new keychain key", async () => {
        const dir = tempDir("desktop-lock");
        const database = path.join(dir, "app.db");
        const vaultFile = path.join(dir, "stand-in-keychain.json");
        const secret = makeTestCanary("desktop");

        core = startDesktopCore(database, vaultFile);
        expect(await core.client.call("app.lockState", {})).toEqual({locked: false, passphraseSet: false, idleLockMs: null});
        const conversation = await core.client.call("conversations.create", {title: `Desk ${secret}`});
        expect(envelopeOf(database)).toEqual({version: 1, mode: "keychain"});
        const firstKeychainKey = vaultOf(vaultFile)[secretNames.storeKey];
        expect(firstKeychainKey).toBeTruthy();

        expect(await core.client.call("app.setPassphrase", {current: null, next: passphrase})).toEqual({passphraseSet: true});
        expect(envelopeOf(database).mode).toBe("passphrase");
        expect(vaultOf(vaultFile)[secretNames.storeKey], "the keychain's key opens nothing now: deleted").toBeUndefined();
        expect(core.saidLocked(), "not locked yet").toBe(false);
        expect(await core.client.call("app.lock", {})).toEqual({locked: true});
        // It tells main, which ends it (here: stop) and starts a fresh process: lock means gone.
        await expect.poll(() => core!.saidLocked()).toBe(true);
        expect(await errorCodeOf(core.client.call("conversations.list", {}))).toBe("STORE_LOCKED");
        expect(await errorCodeOf(core.client.call("app.unlock", {passphrase})), "the ending process unlocks nothing").toBe("STORE_LOCKED");
        await core.stop();

        core = startDesktopCore(database, vaultFile);
        expect(await core.client.call("app.lockState", {})).toMatchObject({locked: true, passphraseSet: true});
        expect(await errorCodeOf(core.client.call("conversations.list", {}))).toBe("STORE_LOCKED");
        expect(await errorCodeOf(core.client.call("app.unlock", {passphrase: "not the passphrase"}))).toBe("WRONG_PASSPHRASE");
        expect(await errorCodeOf(core.client.call("app.unlock", {passphrase})), "the desktop core backs off too").toBe("UNLOCK_BACKOFF");
        await expect.poll(() => errorCodeOf(core!.client.call("app.unlock", {passphrase})), {timeout: 10_000, interval: 100}).toBeNull();
        expect((await core.client.call("conversations.list", {})).map((summary) => summary.id)).toEqual([conversation.id]);

        expect(await errorCodeOf(core.client.call("app.setPassphrase", {current: "not the passphrase", next: null}))).toBe("WRONG_PASSPHRASE");
        expect(await core.client.call("app.setPassphrase", {current: passphrase, next: null})).toEqual({passphraseSet: false});
        expect(envelopeOf(database)).toEqual({version: 1, mode: "keychain"});
        const secondKeychainKey = vaultOf(vaultFile)[secretNames.storeKey];
        expect(secondKeychainKey).toBeTruthy();
        expect(secondKeychainKey, "a new key, not the one before the passphrase").not.toBe(firstKeychainKey);
        expect((await core.client.call("conversations.list", {})).map((summary) => summary.id)).toEqual([conversation.id]);
        await core.stop();

        core = startDesktopCore(database, vaultFile);
        expect(await core.client.call("app.lockState", {})).toEqual({locked: false, passphraseSet: false, idleLockMs: null});
        expect((await core.client.call("conversations.get", {conversationId: conversation.id})).conversation.title).toBe(`Desk ${secret}`);
        await core.stop();

        const holding = [...walkFiles(dir), ...walkFiles(process.env.CLEANROOM_HOME!)].filter((file) => fs.readFileSync(file).includes(passphrase));
        expect(holding, "the passphrase is in no file").toEqual([]);
    }, 120_000);
});

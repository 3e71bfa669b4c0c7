import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import type {ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {askWebMode, connectToWebMode, startWebMode, webCoreProcessOf, type WebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {hitsByNeedle, processTree, scanProcessMemory} from "./helpers/processMemory.js";
import {makeTestCanary, type Needle} from "./helpers/scanForSecrets.js";

const modelPath = requireTestModel();

function commandLineOf(pid: number) {
    try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
        return "";
    }
}

/** Once the core process `previous` has ended and a new one runs. */
async function freshCoreProcess(web: WebMode, previous: number) {
    await expect.poll(() => {
        const core = webCoreProcessOf(web);
        return core != null && core !== previous && !fs.existsSync(`/proc/${previous}`);
    }, {timeout: 30_000, interval: 20}).toBe(true);
    return webCoreProcessOf(web)!;
}

async function turn(client: ConnectedCoreClient, conversationId: string, text: string) {
    const stops: Array<() => void> = [];
    const finished = new Promise<void>((resolve, reject) => {
        stops.push(client.subscribe("turn.finished", (event) => event.conversationId === conversationId && resolve()));
        stops.push(client.subscribe("turn.error", (event) => event.conversationId === conversationId && reject(new Error(event.error.message))));
    });
    try {
        await client.call("chat.send", {conversationId, text, maxTokens: 8});
        await finished;
    } finally {
        stops.forEach((stop) => stop());
    }
}

/**
 * Claim 13, "Lock means gone" (#27 item 4): web mode's core (every frame of the page's WebSocket,
 * the key, the passphrase, decrypted text) runs in a child process that the lock ends; the process
 * serving the page never holds any of it. Both are scanned byte for byte through /proc/<pid>/mem.
 */
describe.skipIf(process.platform !== "linux" || modelPath == null)("lock means gone: web mode's memory after a lock (real model, real encrypted database)", () => {
    it("unlocked, the core process holds the titles, texts and passphrase and the serving process none; locked, no process of web mode holds any; unlocked again, all is back", async () => {
        const home = tempDir("lock-memory");
        const titles = [1, 2, 3].map((n) => makeTestCanary(`title${n}`));
        const texts = [1, 2, 3].map((n) => makeTestCanary(`text${n}`));
        const passphrase = makeTestCanary("passphrase");
        const needles: Needle[] = [
            ...titles.map((value, n) => ({label: `title ${n + 1}`, value})),
            ...texts.map((value, n) => ({label: `text ${n + 1}`, value})),
            {label: "passphrase", value: passphrase}
        ];
        const none = Object.fromEntries(needles.map((needle) => [needle.label, 0]));
        const web = await startWebMode(["--model", modelPath!, "--db", path.join(home, "web.db"), "--threads", "1", "--context-size", "512"],
            {CLEANROOM_HOME: home, TMPDIR: home, CLEANROOM_MODEL: "", CLEANROOM_PASSPHRASE: ""});
        try {
            const ids = await askWebMode(web, async (client) => {
                await expect.poll(async () => (await client.call("model.status", {})).state, {timeout: 60_000}).toBe("ready");
                const created: string[] = [];
                for (const [n, title] of titles.entries()) {
                    const {id} = await client.call("conversations.create", {title});
                    await turn(client, id, `Once upon a time ${texts[n]}`);
                    created.push(id);
                }
                expect(await client.call("app.setPassphrase", {current: null, next: passphrase})).toEqual({passphraseSet: true});
                return created;
            });

            // The first lock: the process that created them (and was given the passphrase) ends.
            const first = webCoreProcessOf(web)!;
            expect(await askWebMode(web, (client) => client.call("app.lock", {}))).toEqual({locked: true});
            const second = await freshCoreProcess(web, first);

            const unlocked = await connectToWebMode(web);
            const unlockStarted = performance.now();
            expect(await unlocked.client.call("app.unlock", {passphrase})).toEqual({locked: false});
            const unlockMs = performance.now() - unlockStarted;
            const shown = await Promise.all(ids.map((conversationId) => unlocked.client.call("conversations.get", {conversationId})));
            expect(shown.map(({conversation}) => conversation.title)).toEqual(titles);
            // A session open at the lock: its context (the history, canary included, in its KV) must end scrubbed, and the audit say so.
            await turn(unlocked.client, ids[0]!, "And then");

            // Control: the scan finds what the unlocked core holds, and the process serving the page holds none of it even now.
            const control = scanProcessMemory(second, needles);
            const controlHits = hitsByNeedle([control], needles);
            expect(Object.entries(controlHits).filter(([, hits]) => hits === 0), "every title, text and the passphrase is in the unlocked core's memory").toEqual([]);
            const servingWhileUnlocked = scanProcessMemory(web.process.pid!, needles);
            expect(hitsByNeedle([servingWhileUnlocked], needles), "the serving process, unlocked").toEqual(none);

            const lockedAt = Date.now();
            const lockStarted = performance.now();
            expect(await unlocked.client.call("app.lock", {})).toEqual({locked: true});
            const lockAnsweredMs = performance.now() - lockStarted;
            unlocked.close();
            const third = await freshCoreProcess(web, second);
            expect(await askWebMode(web, (client) => client.call("app.lockState", {}))).toMatchObject({locked: true, passphraseSet: true});
            const lockedAgainMs = performance.now() - lockStarted;

            const locked = processTree(web.process.pid!).map((pid) => scanProcessMemory(pid, needles));
            expect(locked.map((scan) => scan.pid)).toEqual(expect.arrayContaining([web.process.pid, third]));
            expect(hitsByNeedle(locked, needles), "locked: every process of web mode").toEqual(none);
            console.log(`[lock memory] control (core unlocked, pid ${second}): ${(control.bytesScanned / 2 ** 20).toFixed(0)} MiB scanned, hits ${JSON.stringify(controlHits)}; ` +
                `serving process unlocked: ${(servingWhileUnlocked.bytesScanned / 2 ** 20).toFixed(0)} MiB, 0 hits; locked: ` +
                locked.map((scan) => `pid ${scan.pid} (${path.basename(commandLineOf(scan.pid).split("\0").find((part) => /webCoreEntry|main\.ts|esbuild/.test(part)) ?? "?")}) ${(scan.bytesScanned / 2 ** 20).toFixed(0)} MiB in ${scan.regionsScanned} mappings`).join(", ") +
                `, ${locked.reduce((sum, scan) => sum + scan.findings.length, 0)} hits. app.unlock ${unlockMs.toFixed(0)} ms (key derivation, open, model load); ` +
                `app.lock answered in ${lockAnsweredMs.toFixed(0)} ms (one session scrubbed), a fresh core process answering locked after ${lockedAgainMs.toFixed(0)} ms`);

            const back = await askWebMode(web, async (client) => {
                await client.call("app.unlock", {passphrase});
                return {
                    scrubsAtLock: (await client.call("audit.events", {conversationId: ids[0]!})).filter((event) => event.at >= lockedAt).map((event) => event.kind)
                        .filter((kind) => kind === "scrub.verified" || kind === "scrub.failed"),
                    titles: (await client.call("conversations.list", {})).map((summary) => summary.title).sort(),
                    texts: await Promise.all(ids.map(async (conversationId) => (await client.call("conversations.get", {conversationId})).messages[0]?.content))
                };
            });
            expect(back.scrubsAtLock, "the lock ended the open session scrubbed, recorded by the process it ended").toEqual(["scrub.verified"]);
            expect(back.titles).toEqual([...titles].sort());
            expect(back.texts).toEqual(texts.map((text) => `Once upon a time ${text}`));
        } finally {
            await web.stop();
        }
        expect(web.stderr()).not.toMatch(/ended unexpectedly/);
    }, 240_000);
});

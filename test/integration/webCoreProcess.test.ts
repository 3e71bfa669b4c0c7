import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {askWebMode, connectToWebMode, startWebMode, webCoreProcessOf} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

function webEnv(home: string) {
    return {CLEANROOM_HOME: home, TMPDIR: home, CLEANROOM_MODEL: "", CLEANROOM_PASSPHRASE: ""};
}

/** Web mode's core in a child process: a crash of it is said and mended, never a silent hang; a core that cannot open stops web mode with its reason. */
describe.skipIf(process.platform !== "linux")("web mode's core process", () => {
    it("killed, it is said on stderr, the page's connection drops, and a new core process answers with the data intact", async () => {
        const home = tempDir("web-core-crash");
        const web = await startWebMode(["--no-model", "--db", path.join(home, "web.db")], webEnv(home));
        try {
            const page = await connectToWebMode(web);
            const {id} = await page.client.call("conversations.create", {title: "survives the crash"});
            const crashed = webCoreProcessOf(web)!;
            process.kill(crashed, "SIGKILL");
            await expect.poll(() => page.client.call("conversations.list", {}).then(() => "answered", () => "dropped"), {timeout: 10_000}).toBe("dropped");
            await expect.poll(() => web.stderr(), {timeout: 10_000})
                .toMatch(/^cleanroom web: the core process ended unexpectedly \(signal SIGKILL\); starting it again in 1 s\. The page reconnects to it\.$/m);
            page.close();
            await expect.poll(() => {
                const core = webCoreProcessOf(web);
                return core != null && core !== crashed;
            }, {timeout: 30_000, interval: 50}).toBe(true);
            const titles = await askWebMode(web, async (client) => (await client.call("conversations.list", {})).map((summary) => summary.id));
            expect(titles).toEqual([id]);
            expect(web.process.exitCode).toBeNull();
        } finally {
            await web.stop();
        }
    }, 120_000);

    it("a core that cannot open stops web mode before its URL, with the reason and exit status 1", async () => {
        const home = tempDir("web-core-unusable");
        const failure = await startWebMode(["--no-model", "--db", "/proc/cleanroom-nowhere/web.db"], webEnv(home)).then(() => null, (error: Error) => error.message);
        expect(failure).toMatch(/exited with 1 before printing its URL/);
        expect(failure!.match(/^cleanroom web: Cannot use \/proc\/cleanroom-nowhere for the database: .*procfs.*$/gm), "said once, by the process the user started").toHaveLength(1);
    }, 120_000);

    it.skipIf(modelPath == null)("SIGTERM to the process the user started ends the core process's open session scrubbed (in the audit at the next start), exit status 0", async () => {
        const home = tempDir("web-core-sigterm");
        const args = ["--model", modelPath!, "--db", path.join(home, "web.db"), "--threads", "1", "--context-size", "512"];
        const web = await startWebMode(args, webEnv(home));
        const conversationId = await askWebMode(web, async (client) => {
            await expect.poll(async () => (await client.call("model.status", {})).state, {timeout: 60_000}).toBe("ready");
            const {id} = await client.call("conversations.create", {title: "open at the signal"});
            const finished = new Promise<void>((resolve) => client.subscribe("turn.finished", () => resolve()));
            await client.call("chat.send", {conversationId: id, text: "Once upon a time", maxTokens: 8});
            await finished;
            return id;
        });
        const core = webCoreProcessOf(web)!;
        const exited = new Promise<number | null>((resolve) => web.process.once("exit", resolve));
        web.process.kill("SIGTERM");
        expect(await exited).toBe(0);
        expect(fs.existsSync(`/proc/${core}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${core}/status`, "utf8")), "the core process is gone").toBe(false);

        const again = await startWebMode(args, webEnv(home));
        try {
            const kinds = await askWebMode(again, async (client) => (await client.call("audit.events", {conversationId})).map((event) => event.kind));
            expect(kinds).toContain("scrub.verified");
            expect(kinds).not.toContain("scrub.failed");
        } finally {
            await again.stop();
        }
    }, 240_000);
});

import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import path from "node:path";
import {spawn} from "node:child_process";
import {cliCommand, runCliCapturing, toolsCliEntry} from "../../tools/spawnCli.js";
import {fillerText} from "../../tools/endpointAudit/fillerText.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";

const modelPath = requireTestModel();

/** The product's 60 s answer timeout unless a test stalls the server on purpose: a shorter one times out a loaded machine's honest reply and retries it. */
async function cloudCore(sim: SharedCloudSimulator, apiKey: string, {local = false, contextLimit = null as number | null, retries = 1, timeoutMs = 60_000} = {}) {
    const core = openTestCore(await loadLlama(), {
        database: path.join(tempDir("cloud"), "c.db"),
        engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}},
        cloud: {apiKey: () => apiKey, clientOptions: {timeoutMs, retries}, charsPerCanary: 300}
    });
    core.setCloudSettings({endpoint: sim.url, model: sim.modelName, fallback: true, contextLimit});
    if (local)
        await core.loadModel(modelPath!);
    return core;
}

describe.skipIf(modelPath == null)("shared cloud: routing and the canary protocol against the simulator", () => {
    const cores: Core[] = [];
    const sims: SharedCloudSimulator[] = [];
    const track = <T extends Core | SharedCloudSimulator>(value: T) => {
        (value instanceof Core ? cores : sims).push(value as never);
        return value;
    };
    afterEach(async () => {
        await Promise.all(cores.splice(0).map((core) => core.dispose()));
        await Promise.all(sims.splice(0).map((sim) => sim.close()));
    });

    it("a cloud reply stopped by the user keeps the text it showed, marked interrupted, with its prompt", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "honest", modelPath: modelPath!}));
        const core = track(await cloudCore(sim, "tenant-a"));
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const stop = new AbortController();
        let shown = "";
        const result = await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 400, route: "cloud"}, {
            signal: stop.signal,
            onText: (piece) => {
                shown += piece;
                if (shown.length > 40)
                    stop.abort();
            }
        });
        expect(result).toMatchObject({route: "cloud", status: "interrupted", cloud: {blocked: false, finishReason: "aborted"}});
        expect(result.reply).toBe(shown);
        const messages = core.getConversation(conversation.id).messages;
        expect(messages.map((message) => [message.role, message.status, message.content])).toEqual([
            ["user", "complete", "Once upon a time"],
            ["assistant", "interrupted", shown]
        ]);
    });

    it("honest mode: the reply (from the real model) is delivered, canaries planted and remembered, the route recorded", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "honest", modelPath: modelPath!}));
        const core = track(await cloudCore(sim, "tenant-a"));
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const result = await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 24, route: "cloud"});
        expect(result).toMatchObject({route: "cloud", status: "complete", cloud: {blocked: false, verdict: null}});
        expect(result.reply).toContain("little girl");
        expect(result.reply).not.toMatch(/CLRM/);
        expect(result.cloud.canariesPlanted).toBeGreaterThanOrEqual(1);
        // A cloud turn says what the server said (why it stopped, what it generated), never a local context's figures.
        expect(result.cloud.finishReason).toBe("length");
        expect(result.tokens).toEqual({prompt: result.cloud.promptTokens.ours, generated: 24});
        expect(result).not.toHaveProperty("isolation");
        expect(result).not.toHaveProperty("finishReason");
        expect(sim.requests).toHaveLength(1);
        const report = core.isolationReport(conversation.id);
        expect(report.canaries).toMatchObject({planted: result.cloud.canariesPlanted, checksPassed: 1, repliesBlocked: 0});
        expect(report.turns).toEqual([expect.objectContaining({route: "cloud", messageId: result.assistantMessageId, contextId: null})]);
        expect(servicesOf(core).store.getMessage(result.assistantMessageId)).toMatchObject({route: "cloud", routeReason: "the user asked for the cloud"});
    });

    it("incident mode: an oversize request gets another tenant's stale pages with HTTP 200, and the reply is blocked and not kept", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "incident", poolTokens: 2048}));
        const victim = track(await cloudCore(sim, "tenant-victim"));
        const ours = track(await cloudCore(sim, "tenant-ours"));
        const filler = "The quarterly contract for the house on maple street names the buyer and the bank. ".repeat(20);
        for (let index = 0; index < 3; index++) {
            const conversation = victim.createConversation({policy: "cloud-allowed"});
            await victim.sendMessage({conversationId: conversation.id, text: filler, maxTokens: 16, route: "cloud"});
        }
        const conversation = ours.createConversation({policy: "cloud-allowed"});
        const before = ours.getConversation(conversation.id).messages.length;
        const result = await ours.sendMessage({conversationId: conversation.id, text: "word ".repeat(1800), maxTokens: 16, route: "cloud"});

        expect(sim.requests.at(-1)).toMatchObject({status: 200, overflowed: true});
        expect(sim.requests.at(-1)!.leaks.length).toBeGreaterThan(0);
        expect(result).toMatchObject({status: "blocked", reply: "", cloud: {blocked: true, verdict: {kind: "foreign-canary", blocked: true}}});
        const stored = ours.getConversation(conversation.id).messages;
        expect(stored).toHaveLength(before + 2);
        expect(stored.at(-1)).toMatchObject({status: "blocked", content: "", verdict: {kind: "foreign-canary"}});
        expect(JSON.stringify(ours.auditEvents({conversationId: conversation.id}))).not.toMatch(/maple street/);
        expect(ours.isolationReport(conversation.id).canaries.repliesBlocked).toBe(1);
    });

    it("truncate mode: a server that counts far fewer prompt tokens than were sent is flagged", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "truncate", truncateAboveTokens: 100}));
        const core = track(await cloudCore(sim, "tenant-a"));
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const result = await core.sendMessage({conversationId: conversation.id, text: "The dog ran to the park. ".repeat(60), maxTokens: 8, route: "cloud"});
        expect(result.cloud!.verdict).toMatchObject({kind: "truncation", blocked: false});
        expect(result.cloud!.promptTokens.reported!).toBeLessThan(result.cloud!.promptTokens.ours / 2);
        expect(core.isolationReport(conversation.id).canaries.repliesFlagged).toBe(1);
    });

    it("faulty mode: every fault ends in a clear error and leaves the conversation as it was", async () => {
        const faults = ["server-error", "stall", "cut-stream", "malformed-event"] as const;
        const sim = track(await SharedCloudSimulator.start({mode: "faulty", faults: [...faults], stallMs: 10_000}));
        const core = track(await cloudCore(sim, "tenant-a", {retries: 0, timeoutMs: 3000})); // the stall (10 s) must time out
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const errors: string[] = [];
        for (let index = 0; index < faults.length; index++) {
            const error = await core.sendMessage({conversationId: conversation.id, text: `Question ${index}`, maxTokens: 16, route: "cloud"})
                .then(() => null, (caught: {code: string, message: string}) => caught);
            expect(error, `fault ${index}`).toMatchObject({code: expect.stringMatching(/^CLOUD_/), message: expect.any(String)});
            errors.push(`${error!.code}: ${error!.message}`);
            expect(core.getConversation(conversation.id).messages).toEqual([]);
        }
        expect(errors.join("\n")).toMatch(/HTTP 5\d\d/);
        expect(core.auditEvents({conversationId: conversation.id, kinds: ["cloud.failed"]})).toHaveLength(faults.length);
    });

    it("retries only while nothing was received: a 5xx before the reply is retried and succeeds", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "faulty", faults: ["server-error", "none"], seed: 0}));
        const core = track(await cloudCore(sim, "tenant-a", {retries: 1}));
        const conversation = core.createConversation({policy: "cloud-allowed"});
        const result = await core.sendMessage({conversationId: conversation.id, text: "Hello there", maxTokens: 8, route: "cloud"});
        expect(result.status).toBe("complete");
        expect(sim.requests.map((request) => request.status)).toEqual([expect.any(Number), 200]);
        expect(sim.requests[0]!.status).toBeGreaterThanOrEqual(500);
    });

    it("a local conversation never reaches the network, whatever else is set; a cloud-allowed one falls back only with the switch on", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "honest", modelPath: modelPath!}));
        const core = track(await cloudCore(sim, "tenant-a", {local: true}));
        const tooBig = "story ".repeat(700);

        const local = core.createConversation({policy: "local"});
        await expect(core.sendMessage({conversationId: local.id, text: tooBig, maxTokens: 16})).rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});
        await expect(core.sendMessage({conversationId: local.id, text: "hi", maxTokens: 8, route: "cloud"})).rejects.toMatchObject({code: "CLOUD_DISABLED"});
        const fits = await core.sendMessage({conversationId: local.id, text: "Once upon a time", maxTokens: 8});
        expect(fits.route).toBe("local");
        expect(sim.requests).toHaveLength(0);

        const allowed = core.createConversation({policy: "cloud-allowed"});
        const small = await core.sendMessage({conversationId: allowed.id, text: "Once upon a time", maxTokens: 8});
        expect(small.route).toBe("local");
        const big = await core.sendMessage({conversationId: allowed.id, text: tooBig, maxTokens: 16});
        expect(big).toMatchObject({route: "cloud", routeReason: expect.stringMatching(/does not fit the local context \(\d+ tokens over\)/)});
        expect(sim.requests).toHaveLength(1);

        core.setCloudSettings({fallback: false});
        await expect(core.sendMessage({conversationId: allowed.id, text: tooBig, maxTokens: 16})).rejects.toMatchObject({code: "CONTEXT_OVERFLOW"});
        expect(sim.requests).toHaveLength(1);
    });

    it("a request over the endpoint's context limit is refused locally, before anything is sent", async () => {
        const sim = track(await SharedCloudSimulator.start({mode: "honest", poolTokens: 512}));
        const core = track(await cloudCore(sim, "tenant-a"));
        const conversation = core.createConversation({policy: "cloud-allowed"});
        await expect(core.sendMessage({conversationId: conversation.id, text: "word ".repeat(3000), maxTokens: 16, route: "cloud"}))
            .rejects.toMatchObject({code: "CLOUD_OVER_LIMIT", details: {contextLimit: 512}});
        expect(sim.requests).toHaveLength(0);
        expect(core.getConversation(conversation.id).messages).toEqual([]);
    });
});

describe.skipIf(modelPath == null)("shared cloud CLI", () => {
    let sim: SharedCloudSimulator;
    beforeAll(async () => {
        sim = await SharedCloudSimulator.start({mode: "incident", poolTokens: 1024});
    });
    afterAll(async () => {
        await sim.close();
    });

    it("chat --cloud --json: delivered (exit 0), then blocked (exit 3) when the incident leaks into an oversize request", async () => {
        const {runCli} = await import("../../tools/spawnCli.js");
        const db = path.join(tempDir("cloud-cli"), "c.db");
        const args = (conversation: string, prompt: string) => ["chat", "--cloud", "--endpoint", sim.url, "--cloud-model", sim.modelName,
            "--db", db, "--conversation", conversation, "--prompt", prompt, "--max-tokens", "16", "--json"];
        const delivered = JSON.parse(await runCli(args("c1", "The contract for the house on maple street is signed. ".repeat(15)),
            {env: {...process.env, CLEANROOM_CLOUD_API_KEY: "tenant-one"}}));
        expect(delivered).toMatchObject({conversationId: "c1", route: "cloud", blocked: false, verdict: null, canariesPlanted: expect.any(Number)});

        const blocked = await runCli(args("c2", "word ".repeat(840)), {env: {...process.env, CLEANROOM_CLOUD_API_KEY: "tenant-two"}})
            .catch((error: Error) => error);
        expect(blocked).toBeInstanceOf(Error);
        expect((blocked as Error).message).toMatch(/exited with 3/);
    });
});

describe.skipIf(modelPath == null)("docs/cloud.md's incident, by its own commands", () => {
    it("`sim-cloud --mode incident` says its model id and key rule; `chat --cloud` with an ordinary long paste is sent and blocked (exit 3)", async () => {
        // docs/cloud.md's command line, on a free port instead of 8080; the local model loaded, as on a set-up machine.
        const {env, db} = hermeticCliEnv("readme-incident", {CLEANROOM_MODEL: modelPath!});
        const {command, args} = cliCommand(["sim-cloud", "--port", "0", "--mode", "incident"], {entry: toolsCliEntry});
        const sim = spawn(command, args, {env: {...env, CLEANROOM_MODEL: ""}, stdio: ["ignore", "pipe", "pipe"]});
        try {
            let banner = "";
            await new Promise<void>((resolve, reject) => {
                sim.stdout.on("data", (chunk: Buffer) => {
                    banner += chunk.toString("utf8");
                    if (banner.includes("Stop with Ctrl+C."))
                        resolve();
                });
                sim.on("exit", (code) => reject(new Error(`sim-cloud exited with ${code}: ${banner}`)));
            });
            const url = banner.split("\n")[0]!;
            expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
            expect(banner).toMatch(/Model id: +cleanroom-sim\b/);
            expect(banner).toMatch(/API key: +any non-empty key/);
            expect(banner).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/tokenize/);
            expect(banner).toMatch(/3 other tenants' earlier requests are in the KV memory/);

            // An ordinary paste of notes, the size of the report's (15.5k characters), with a plain request.
            const random = new SeededRandom(2026);
            const prompt = `Please summarise my notes below in five bullet points.\n\n${fillerText(() => random.next(), 15_500)}`;
            const run = await runCliCapturing(["chat", "--cloud", "--endpoint", url, "--cloud-model", "cleanroom-sim", "--db", db,
                "--conversation", "incident-demo", "--prompt", prompt, "--json"], {env: {...env, CLEANROOM_CLOUD_API_KEY: "my-key"}});
            expect(run.stderr).toBe("");
            expect(run.code).toBe(3);
            const reply = JSON.parse(run.stdout);
            expect(reply).toMatchObject({blocked: true, reply: "", status: "blocked", verdict: {kind: "foreign-canary"},
                promptTokens: {countedBy: "endpoint"}});
            expect(reply.promptTokens.ours).toBeLessThanOrEqual(6015);
        } finally {
            sim.kill("SIGINT");
        }
    });
});

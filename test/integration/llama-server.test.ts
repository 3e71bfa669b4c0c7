import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {auditEndpoint} from "../../tools/endpointAudit/auditEndpoint.js";
import {CloudClient} from "../../src/core/node/cloud/CloudClient.js";
import {EndpointTokenizerCache} from "../../src/core/node/cloud/EndpointTokenizerCache.js";
import {englishReadmeProse} from "../helpers/englishProse.js";
import {repoRoot, requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";
import {findLlamaServer, startLlamaServer, type RunningLlamaServer} from "../helpers/llamaServer.js";

/**
 * A real peer nobody here wrote: llama.cpp's llama-server (multi-slot, RAM prompt cache),
 * built from the source node-llama-cpp ships (scripts/build-llama-cpp.sh).
 */
const modelPath = requireTestModel();
const binary = findLlamaServer();
if (binary == null && process.env.CI === "true")
    throw new Error("llama-server is missing: .ci/run must build it with scripts/build-llama-cpp.sh");
if (binary == null)
    console.warn("Skipping the llama-server tests: run scripts/build-llama-cpp.sh first (about 7 minutes on 2 cores).");

const slots = 4;
const slotContext = 512;

describe.skipIf(modelPath == null || binary == null)("the cloud client against llama-server", () => {
    let server: RunningLlamaServer;
    let core: Core;

    beforeAll(async () => {
        server = await startLlamaServer(binary!, modelPath!, [
            "-c", String(slots * slotContext), "--parallel", String(slots), "-t", "1", "--cache-ram", "64", "--no-webui"
        ]);
        core = Core.create(await loadLlama(), {
            database: path.join(tempDir("llama-server"), "c.db"),
            engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}},
            cloud: {clientOptions: {timeoutMs: 30_000, retries: 0}}
        });
        await core.loadModel(modelPath!); // the same tokenizer: our prompt count should match the server's
        core.setCloudSettings({endpoint: server.url, model: "stories260K", fallback: true, contextLimit: slotContext});
    });
    afterAll(async () => {
        await core?.dispose();
        await server?.close();
    });

    it("streams a reply with usage and a finish reason; the canary check passes and the counts agree", async () => {
        const conversation = core.createConversation({policy: "cloud-allowed", settings: {systemPrompt: "You tell stories."}});
        const result = await core.sendMessage({conversationId: conversation.id, text: "Once upon a time", maxTokens: 24, route: "cloud"});
        expect(result).toMatchObject({route: "cloud", status: "complete", cloud: {blocked: false, verdict: null}});
        expect(result.reply.length).toBeGreaterThan(0);
        expect(result.cloud!.finishReason).toMatch(/^(stop|length)$/);
        const {ours, reported} = result.cloud!.promptTokens;
        expect(reported).not.toBeNull();
        expect(reported!).toBeGreaterThan(ours / 2);
        expect(result.cloud!.promptTokens.countedBy).toBe("endpoint");
        console.log(`llama-server: prompt tokens ours ${ours}, reported ${reported}; model "${result.cloud!.model}"; warnings ${JSON.stringify(result.cloud!.warnings)}`);
    });

    it("counts tokens with llama-server's own POST /tokenize: the model's tokenizer, and the endpoint remembered as offering one", async () => {
        const tokenizers = new EndpointTokenizerCache();
        const client = new CloudClient({baseURL: server.url, model: "stories260K", apiKey: null, contextLimit: null}, {tokenizers});
        expect(client.tokenizeUrl).toBe(`${new URL(server.url).origin}/tokenize`);
        const corpora = {
            english: englishReadmeProse(),
            code: fs.readFileSync(path.join(repoRoot, "src/core/node/cloud/CloudClient.ts"), "utf8")
        };
        for (const [name, text] of Object.entries(corpora)) {
            const counted = await client.countTokens(text);
            expect(counted).toEqual({tokens: core.countTokens(text), countedBy: "endpoint"});
            console.log(`llama-server /tokenize (stories260K): ${name} ${(text.length / counted.tokens).toFixed(2)} characters per token`);
        }
        expect(tokenizers.offersTokenizer(client.tokenizeUrl)).toBe(true);
    });

    it("a request over a slot's context is refused, by us before sending or by the server, never answered", async () => {
        const conversation = core.createConversation({policy: "cloud-allowed"});
        await expect(core.sendMessage({conversationId: conversation.id, text: "story ".repeat(600), maxTokens: 16, route: "cloud"}))
            .rejects.toMatchObject({code: "CLOUD_OVER_LIMIT"});

        // Without our limit, the server itself must refuse (llama.cpp rejects what does not fit a slot).
        core.setCloudSettings({contextLimit: 100_000});
        try {
            await expect(core.sendMessage({conversationId: conversation.id, text: "story ".repeat(600), maxTokens: 16, route: "cloud"}))
                .rejects.toMatchObject({code: expect.stringMatching(/^CLOUD_(OVER_LIMIT|REQUEST_FAILED)$/)});
        } finally {
            core.setCloudSettings({contextLimit: slotContext});
        }
        expect(core.getConversation(conversation.id).messages).toEqual([]);
    });

    it(`audit: ${slots} tenants at once over the parallel slots and the RAM prompt cache, no cross-tenant leak`, async () => {
        const report = await auditEndpoint({
            baseURL: server.url, model: "stories260K", tenants: 6, requests: 48, concurrency: slots,
            contextLimit: slotContext, maxTokens: 24, seed: 5
        });
        // Sized by llama-server's own tokenizer, so that "near the limit" is near it.
        expect(report.sizing.countedBy).toBe("endpoint");
        console.log(`audit of llama-server: ${JSON.stringify({...report, errors: report.errors.length, sizes: report.sizes})}`);
        expect(report.completed).toBeGreaterThan(0);
        expect(report.oversizeAccepted).toBe(0);
        expect(report.leaks).toEqual([]);
    });
});

import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {tempDir} from "../helpers/tempCore.js";

/** The cloud client's `cache_salt`: one per conversation, so a shared server keeps each conversation's prefix cache apart. */
async function cloudCore(sim: SharedCloudSimulator) {
    const core = Core.create(await loadLlama(), {
        database: path.join(tempDir("cloud-salt"), "c.db"),
        engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}},
        cloud: {apiKey: () => "tenant-me", clientOptions: {timeoutMs: 10_000, retries: 0}}
    });
    core.setCloudSettings({endpoint: sim.url, model: sim.modelName, fallback: true, contextLimit: null});
    return core;
}

function chatBodiesReceived(sim: SharedCloudSimulator) {
    return sim.received.filter((request) => request.path === "/v1/chat/completions").map((request) => JSON.parse(request.body) as {cache_salt?: string});
}

describe("cloud turns send a per-conversation cache_salt to endpoints that take it", () => {
    const cleanup: Array<() => Promise<void>> = [];
    afterEach(async () => {
        await Promise.all(cleanup.splice(0).map((close) => close()));
    });

    it("each turn of a conversation sends that conversation's salt; another conversation sends another", async () => {
        const sim = await SharedCloudSimulator.start({mode: "honest"});
        const core = await cloudCore(sim);
        cleanup.push(() => core.dispose(), () => sim.close());
        const first = core.createConversation({policy: "cloud-allowed"});
        const second = core.createConversation({policy: "cloud-allowed"});
        for (const [conversation, text] of [[first, "Once upon a time"], [first, "And then?"], [second, "Once upon a time"]] as const) {
            const result = await core.sendMessage({conversationId: conversation.id, text, maxTokens: 8, route: "cloud"});
            expect(result.cloud!.blocked).toBe(false);
        }
        const salts = sim.requests.map((request) => request.cacheSalt);
        expect(salts).toHaveLength(3);
        expect(salts[0]).toMatch(/^[\w-]{43}$/); // 256 bits, base64url
        expect(salts[1]).toBe(salts[0]);
        expect(salts[2]).toMatch(/^[\w-]{43}$/);
        expect(salts[2]).not.toBe(salts[0]);
        // Nothing of the conversation's id goes out with it.
        expect(salts.join(" ")).not.toContain(first.id);
    });

    it("an endpoint that refuses the field (HTTP 400, unknown argument) still answers: asked again at once without it, and not sent it again", async () => {
        const sim = await SharedCloudSimulator.start({mode: "honest", cacheSalt: "reject"});
        const core = await cloudCore(sim);
        cleanup.push(() => core.dispose(), () => sim.close());
        for (const text of ["Once upon a time", "A girl named Lily"]) {
            const conversation = core.createConversation({policy: "cloud-allowed"});
            const result = await core.sendMessage({conversationId: conversation.id, text, maxTokens: 8, route: "cloud"});
            expect(result.cloud!.blocked).toBe(false);
            expect(result.reply.length).toBeGreaterThan(0);
        }
        // The first request carried the salt and was refused; its retry and the next conversation's request did not.
        expect(chatBodiesReceived(sim).map((body) => body.cache_salt != null)).toEqual([true, false, false]);
        expect(sim.requests.map((request) => [request.status, request.cacheSalt])).toEqual([[200, null], [200, null]]);
    });
});

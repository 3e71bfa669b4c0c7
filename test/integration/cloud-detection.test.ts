import {afterAll, describe, expect, it} from "vitest";
import {FingerprintIndex, fingerprintText} from "../../src/core/common/cloud/fingerprints.js";
import {CloudClient} from "../../src/core/node/cloud/CloudClient.js";
import {runGuardedCloudTurn} from "../../src/core/node/cloud/runGuardedCloudTurn.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {SeededRandom} from "../../tools/cloudSim/SeededRandom.js";
import type {SimMode} from "../../tools/cloudSim/types.js";
import {canaryPattern, memoryLedger, prose, testFingerprintKey} from "../helpers/cloudFixtures.js";

/**
 * Detection over HTTP: at least 1,000 requests per mode from three tenants (three installs,
 * each with its own canary ledger and four conversations) through the real client, scanner
 * and simulator. Ground truth is the simulator's own record of what leaked from whom.
 */
const requestsPerMode = 1_000;
const tenants = 3;
const conversationsPerTenant = 4;
const rates: Record<string, unknown> = {};

type Tally = {
    requests: number, blocked: number, falseBlocks: number,
    canaryLeaks: number, canaryLeaksBlocked: number,
    fingerprintLeaks: number, fingerprintLeaksBlocked: number,
    unmarkedForeignLeaks: number, sameConversationLeaks: number
};

async function runMode(mode: SimMode, {charsPerCanary = 400} = {}): Promise<Tally> {
    const random = new SeededRandom(4242 + mode.length);
    const sim = await SharedCloudSimulator.start({mode, seed: 7, leakRate: 0.3});
    try {
        const installs = Array.from({length: tenants}, (_, tenant) => ({
            client: new CloudClient({baseURL: sim.url, model: sim.modelName, apiKey: `tenant-${tenant}`, contextLimit: null}, {retries: 0}),
            ledger: memoryLedger(),
            // For conversation c: fingerprints of this tenant's other conversations.
            indexExcept: Array.from({length: conversationsPerTenant}, () => new FingerprintIndex({key: testFingerprintKey}))
        }));
        const owner = new Map<string, {tenant: number, conversation: number}>();
        const tally: Tally = {
            requests: 0, blocked: 0, falseBlocks: 0, canaryLeaks: 0, canaryLeaksBlocked: 0,
            fingerprintLeaks: 0, fingerprintLeaksBlocked: 0, unmarkedForeignLeaks: 0, sameConversationLeaks: 0
        };

        for (let index = 0; index < requestsPerMode; index++) {
            const tenant = index % tenants;
            const conversation = Math.floor(index / tenants) % conversationsPerTenant;
            const install = installs[tenant]!;
            const oversize = mode === "incident" && random.chance(0.15);
            const text = prose(random, oversize ? random.between(2900, 3300) : random.between(40, 300));
            const messages = [{role: "system" as const, content: "You are a helpful assistant."}, {role: "user" as const, content: text}];

            const result = await runGuardedCloudTurn({
                client: install.client, ledger: install.ledger, conversationId: `t${tenant}-c${conversation}`, requestId: `r${index}`,
                messages, maxTokens: 32, charsPerCanary,
                fingerprints: install.indexExcept[conversation]!.excluding(messages.map((message) => message.content))
            });
            const record = sim.requests.at(-1)!;
            owner.set(record.requestId, {tenant, conversation});
            tally.requests++;
            if (result.blocked)
                tally.blocked++;

            let expectBlock = false;
            for (const leak of record.leaks) {
                const source = owner.get(leak.requestId)!;
                if (canaryPattern.test(leak.sourceText)) {
                    expectBlock = true;
                    tally.canaryLeaks++;
                    if (result.blocked)
                        tally.canaryLeaksBlocked++;
                } else if (source.tenant === tenant && source.conversation !== conversation && leak.sourceText.split(/\s+/).length >= 10) {
                    expectBlock = true;
                    tally.fingerprintLeaks++;
                    if (result.blocked)
                        tally.fingerprintLeaksBlocked++;
                } else if (source.tenant === tenant)
                    tally.sameConversationLeaks++;
                else
                    tally.unmarkedForeignLeaks++;
            }
            if (result.blocked && record.leaks.length === 0)
                tally.falseBlocks++;
            if (expectBlock && !result.blocked && process.env.CLEANROOM_DEBUG === "1")
                console.log(`missed leak in request ${index}: ${JSON.stringify(record.leaks.map((leak) => ({...leak, sourceText: leak.sourceText.length})))}`);

            const hashes = fingerprintText(text, install.indexExcept[0]!.options);
            install.indexExcept.forEach((index_, other) => {
                if (other !== conversation)
                    index_.addConversationHashes(hashes);
            });
        }
        return tally;
    } finally {
        await sim.close();
    }
}

describe("detection rates over HTTP, 1,000 requests per mode", () => {
    afterAll(() => {
        console.log(`cloud detection rates: ${JSON.stringify(rates, null, 2)}`);
    });

    it("honest: zero false blocks", async () => {
        const tally = await runMode("honest");
        rates.honest = tally;
        expect(tally.requests).toBe(requestsPerMode);
        expect(tally.blocked).toBe(0);
    });

    it("incident: every reply carrying a leaked canary is blocked; canary-free leaks of the user's other conversations at least 95%", async () => {
        const tally = await runMode("incident");
        rates.incident = tally;
        expect(tally.canaryLeaks).toBeGreaterThan(20);
        expect(tally.canaryLeaksBlocked).toBe(tally.canaryLeaks);
        expect(tally.falseBlocks).toBe(0);
        if (tally.fingerprintLeaks > 0)
            expect(tally.fingerprintLeaksBlocked / tally.fingerprintLeaks).toBeGreaterThanOrEqual(0.95);
    });

    it("random-leak: 100% of canary leaks blocked", async () => {
        const tally = await runMode("random-leak");
        rates["random-leak"] = tally;
        expect(tally.canaryLeaks).toBeGreaterThan(50);
        expect(tally.canaryLeaksBlocked).toBe(tally.canaryLeaks);
        expect(tally.falseBlocks).toBe(0);
    });

    it("random-leak with only the system message's canary: canary-free leaks of the user's other conversations blocked at least 95%", async () => {
        const tally = await runMode("random-leak", {charsPerCanary: 0});
        rates["random-leak, sparse canaries"] = tally;
        expect(tally.fingerprintLeaks).toBeGreaterThan(20);
        expect(tally.fingerprintLeaksBlocked / tally.fingerprintLeaks).toBeGreaterThanOrEqual(0.95);
        expect(tally.canaryLeaksBlocked).toBe(tally.canaryLeaks);
        expect(tally.falseBlocks).toBe(0);
    });

    it("paraphrase: at least 99% of mangled canary leaks blocked", async () => {
        const tally = await runMode("paraphrase");
        rates.paraphrase = tally;
        expect(tally.canaryLeaks).toBeGreaterThan(50);
        expect(tally.canaryLeaksBlocked / tally.canaryLeaks).toBeGreaterThanOrEqual(0.99);
        expect(tally.falseBlocks).toBe(0);
    });
});

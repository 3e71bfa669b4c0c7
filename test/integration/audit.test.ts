import {afterEach, describe, expect, it} from "vitest";
import {auditEndpoint} from "../../src/core/node/cloud/audit/auditEndpoint.js";
import {SharedCloudSimulator} from "../../src/core/node/cloud/sim/SharedCloudSimulator.js";
import {runCli} from "../../src/cli/spawnCli.js";

describe("audit: cross-tenant leak probe of an endpoint", () => {
    const sims: SharedCloudSimulator[] = [];
    afterEach(async () => {
        await Promise.all(sims.splice(0).map((sim) => sim.close()));
    });

    it("finds the leaks of incident mode (requests between its real memory and its advertised limit answered 200 with stale pages)", async () => {
        const sim = await SharedCloudSimulator.start({mode: "incident", poolTokens: 2048});
        sims.push(sim);
        const report = await auditEndpoint({baseURL: sim.url, model: sim.modelName, tenants: 4, requests: 60, concurrency: 4, seed: 11, charsPerToken: 3.5});
        expect(report.contextLimit).toBe(sim.advertisedContext);
        // Past the advertised limit the simulator refuses; between its real memory and that limit it answers 200 with stale pages.
        expect(report.errors.every((error) => error.code === "CLOUD_OVER_LIMIT")).toBe(true);
        expect(report.leaks.length).toBeGreaterThan(0);
        expect(report.leaks.some((leak) => leak.kind === "cross-tenant-canary" && leak.from.some((tenant) => tenant !== leak.tenant))).toBe(true);
        // Ground truth: every simulator reply that leaked another tenant's pages was reported.
        const leakedRequests = sim.requests.filter((request) => request.leaks.some((leak) => leak.tenant !== request.tenant && /CLRM-/.test(leak.sourceText)));
        expect(report.leaks.length).toBeGreaterThanOrEqual(leakedRequests.length);
    });

    it("finds none in honest mode, where every oversize request is refused", async () => {
        const sim = await SharedCloudSimulator.start({mode: "honest", poolTokens: 2048});
        sims.push(sim);
        const report = await auditEndpoint({baseURL: sim.url, model: sim.modelName, tenants: 4, requests: 60, concurrency: 4, seed: 11, charsPerToken: 3.5});
        expect(report.leaks).toEqual([]);
        expect(report.oversizeAccepted).toBe(0);
        expect(report.errors.length).toBeGreaterThanOrEqual(report.oversizeRequests);
        expect(report.errors.every((error) => error.code === "CLOUD_OVER_LIMIT")).toBe(true);
    });

    it("the CLI prints the JSON report", async () => {
        const sim = await SharedCloudSimulator.start({mode: "incident", poolTokens: 2048});
        sims.push(sim);
        const report = JSON.parse(await runCli(["audit", "--endpoint", sim.url, "--model", sim.modelName, "--requests", "24", "--seed", "3", "--json"]));
        expect(report).toMatchObject({requests: 24, leaks: expect.any(Array), oversizeAccepted: expect.any(Number), errors: expect.any(Array)});
    });
});

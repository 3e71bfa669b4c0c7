import {afterEach, beforeAll, describe, expect, it} from "vitest";
import {auditEndpoint} from "../../tools/endpointAudit/auditEndpoint.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {testBuildScript} from "../helpers/testBuild.js";
import {runCliInPseudoTerminal} from "../helpers/pseudoTerminal.js";

describe("audit: cross-tenant leak probe of an endpoint", () => {
    const sims: SharedCloudSimulator[] = [];
    /** The tools' CLI from the test build, looked up once for the file. */
    let toolsCli: string;
    beforeAll(async () => {
        toolsCli = await testBuildScript("toolsCli");
    });
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
        const run = await runCliCapturing(["audit", "--endpoint", sim.url, "--model", sim.modelName, "--requests", "24", "--seed", "3", "--json"],
            {env: hermeticCliEnv("audit-json").env, entry: toolsCli});
        const report = JSON.parse(run.stdout);
        expect(run.stderr).toBe("");
        expect(report).toMatchObject({requests: 24, leaks: expect.any(Array), oversizeAccepted: expect.any(Number), errors: expect.any(Array)});
    });

    it("the CLI exits 3 when it finds leaks (incident), 0 when the endpoint is clean (honest), 1 when nothing answered", async () => {
        const {env} = hermeticCliEnv("audit-exit");
        const incident = await SharedCloudSimulator.start({mode: "incident", poolTokens: 2048});
        const honest = await SharedCloudSimulator.start({mode: "honest", poolTokens: 2048});
        sims.push(incident, honest);
        const audit = (sim: SharedCloudSimulator, ...flags: string[]) =>
            runCliCapturing(["audit", "--endpoint", sim.url, "--model", sim.modelName, "--requests", "24", "--seed", "3", ...flags], {env, entry: toolsCli});

        const leaky = await audit(incident, "--json");
        expect(JSON.parse(leaky.stdout).leaks.length).toBeGreaterThan(0);
        expect(leaky.code).toBe(3);
        const leakyText = await audit(incident);
        expect(leakyText.code).toBe(3);
        expect(leakyText.stdout).toMatch(/^Leaks: [1-9]\d*$/m);

        const clean = await audit(honest, "--json");
        expect(JSON.parse(clean.stdout)).toMatchObject({leaks: [], oversizeAccepted: 0});
        expect(clean.code).toBe(0);

        const nothing = await runCliCapturing(["audit", "--endpoint", honest.url, "--model", "no-such-model", "--requests", "4", "--json"], {env, entry: toolsCli});
        expect(nothing.code).toBe(1);
        expect(JSON.parse(nothing.stderr).error).toMatchObject({code: "CLOUD_REQUEST_FAILED", message: expect.stringMatching(/answered none of the 4 requests/)});
    });

    it("without a terminal, progress is one plain line per request on stderr", async () => {
        const sim = await SharedCloudSimulator.start({mode: "honest", poolTokens: 2048});
        sims.push(sim);
        const run = await runCliCapturing(["audit", "--endpoint", sim.url, "--model", sim.modelName, "--requests", "12", "--seed", "3"],
            {env: hermeticCliEnv("audit-plain").env, entry: toolsCli});
        expect(run.code).toBe(0);
        const lines = run.stderr.split("\n").filter((line) => line !== "");
        expect(lines).toHaveLength(12);
        lines.forEach((line, index) => expect(line).toMatch(new RegExp(`^audit: ${index + 1}/12 requests \\(\\d+%\\), \\d+s elapsed$`)));
        expect(run.stderr).not.toMatch(/[\r\x1b]/);
    });

    it("on a terminal, progress is one bar redrawn in place with the count, percentage and elapsed time", async () => {
        const sim = await SharedCloudSimulator.start({mode: "honest", poolTokens: 2048});
        sims.push(sim);
        const terminal = runCliInPseudoTerminal(["audit", "--endpoint", sim.url, "--model", sim.modelName, "--requests", "12", "--seed", "3"],
            {env: hermeticCliEnv("audit-tty").env, entry: toolsCli});
        expect(await terminal.exited).toBe(0);
        const frames = terminal.output().split("\r").filter((frame) => frame.startsWith("audit "));
        expect(frames).toHaveLength(12);
        frames.forEach((frame, index) =>
            expect(frame).toMatch(new RegExp(`^audit \\[[#.]{30}\\] +\\d+%  ${index + 1}/12 requests  \\d+s\\x1b\\[K`)));
        expect(frames.at(-1)).toMatch(/^audit \[#{30}\] 100%  12\/12 requests/);
        expect(terminal.output()).not.toMatch(/audit: \d+\/12/);
    });
});

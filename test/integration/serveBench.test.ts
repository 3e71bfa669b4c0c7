import {execFile} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {promisify} from "node:util";
import {describe, expect, it} from "vitest";
import {coreProcessEnv} from "../../src/core/common/coreProcessEnv.js";
import {findLlamaServer} from "../helpers/llamaServer.js";
import {tempDir} from "../helpers/tempCore.js";
import {repoRoot, requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const binary = findLlamaServer();

describe.skipIf(modelPath == null || binary == null)("npm run bench:serve", () => {
    it("measures cleanroom serve and llama-server on the same model and threads at each concurrency, the scrub's cost to the next request, and writes the JSON report", async () => {
        const out = path.join(tempDir("serve-bench"), "report.json");
        await promisify(execFile)(process.execPath, [
            "--import", import.meta.resolve("tsx"), path.join(repoRoot, "tools/serveBench/serveBench.ts"),
            "--model", modelPath!, "--llama-server", binary!, "--concurrency", "1,2", "--requests-per-client", "2", "--max-tokens", "8", "--warmup-requests", "3", "--out", out
        ], {cwd: repoRoot, env: {...coreProcessEnv, ...process.env}, maxBuffer: 16 << 20});
        const report = JSON.parse(fs.readFileSync(out, "utf8")) as Record<string, Array<Record<string, unknown>>> & {
            scrubOffPath: unknown, loadAverage: unknown, warmupRequests: unknown, threads: unknown, llamaServerForbiddenByteTokens: unknown
        };
        expect(report.warmupRequests).toBe(3);
        for (const server of ["cleanroom", "llamaServer"]) {
            expect(report[server]!.map((result) => result.concurrency)).toEqual([1, 2]);
            for (const result of report[server]!)
                expect(result).toMatchObject({
                    requests: (result.concurrency as number) * 2, errors: expect.any(Array),
                    completionTokens: expect.any(Number), aggregateTokensPerSecond: expect.any(Number), ttftMs: {median: expect.any(Number)},
                    // CPU time per token of the whole process and of its main thread (cleanroom's JavaScript), read from /proc.
                    cpuUsPerToken: expect.any(Number), mainThreadCpuUsPerToken: expect.any(Number)
                });
            expect(report[server]!.every((result) => (result.completionTokens as number) > 0 && (result.aggregateTokensPerSecond as number) > 0)).toBe(true);
        }
        // llama-server now and then closes a kept-alive connection under a new request ("other side closed"): reported, not counted.
        // cleanroom serve answers every request.
        expect(report.cleanroom!.flatMap((result) => result.errors)).toEqual([]);
        expect(report.comparison!.map((row) => row.concurrency)).toEqual([1, 2]);
        // The next request's first token with the previous context's scrub running and after it (every scrub reported), and llama-server's.
        const median = {median: expect.any(Number), p95: expect.any(Number)};
        expect(report.scrubOffPath).toEqual({
            cleanroom: {requests: 4, nextTtftScrubRunningMs: median, nextTtftScrubDoneMs: median, scrubReportedAfterReplyMs: median, scrubCostToNextTtftMs: expect.any(Number)},
            llamaServer: {requests: 4, nextTtftScrubRunningMs: median, nextTtftScrubDoneMs: null, scrubReportedAfterReplyMs: null, scrubCostToNextTtftMs: null}
        });
        expect(report.loadAverage).toEqual({atStart: expect.any(Array), atEnd: expect.any(Array)});
        // Each server's threads: serve's own line (here the tests' pool of 1, no --threads: the measured count), llama-server's -t at the cores.
        expect(report.threads).toEqual({cleanroom: expect.stringMatching(/^libuv pool 1 \(one request decodes at a time\), \d+ threads? per context$/), llamaServer: os.availableParallelism()});
        expect(report.llamaServerForbiddenByteTokens).toBe(256); // the test model's byte-fallback tokens, which llama-server is asked never to pick
    });
});

import type {Command} from "commander";
import * as z from "zod";
import {CloudContextLimitSchema, MaxTokensSchema, SeedSchema} from "../../src/core/common/api/limits.js";
import {CleanroomError} from "../../src/core/common/errors.js";
import type {AuditReport} from "../endpointAudit/auditEndpoint.js";
import type {PrefixCacheProbeReport} from "../endpointAudit/prefixCacheProbe.js";
import type {PrefixCacheTimingReport} from "../endpointAudit/prefixCacheTimingProbe.js";
import {cloudApiKeyFromEnvironment} from "../../src/cli/cloudApiKeyFromEnvironment.js";
import {formatTable} from "../../src/cli/formatTable.js";
import {numberOption} from "../../src/cli/optionParsers.js";
import {exitCodes, printJson, reportError} from "../../src/cli/output.js";
import {StepProgress} from "../../src/cli/StepProgress.js";

const TenantsSchema = z.number().int().min(1).max(1000);
const RequestsSchema = z.number().int().min(1).max(100_000);
const ConcurrencySchema = z.number().int().min(1).max(256);
const TimingPairsSchema = z.number().int().min(0).max(1000);

type AuditOptions = {
    endpoint: string, model: string, tenants: number, requests: number, concurrency: number,
    contextLimit?: number, maxTokens: number, seed?: number, json?: boolean, prefixCacheProbe: boolean, timingPairs: number
};

/**
 * `cleanroom audit`: exits 3 when the endpoint leaked or accepted an oversize request, 0 only
 * when it was probed and found clean, 1 on error (including an endpoint that answered nothing).
 */
export function registerAuditCommand(program: Command) {
    program.command("audit")
        .description("Probe an OpenAI-compatible endpoint for cross-tenant leaks (several tenants, canaries, requests near and past the limit). " +
            "Exit 0: clean; 3: leaks or oversize requests accepted; 1: error")
        .requiredOption("--endpoint <base-url>", "OpenAI-compatible base URL (key: $CLEANROOM_CLOUD_API_KEY)")
        .requiredOption("--model <name>", "model name at the endpoint")
        .option("--tenants <n>", "tenants to play", numberOption("--tenants", TenantsSchema), 4)
        .option("--requests <n>", "requests in all", numberOption("--requests", RequestsSchema), 40)
        .option("--concurrency <n>", "requests in flight at once", numberOption("--concurrency", ConcurrencySchema), 4)
        .option("--context-limit <n>", "the endpoint's context limit (default: as it reports)", numberOption("--context-limit", CloudContextLimitSchema))
        .option("--max-tokens <n>", "reply budget per request", numberOption("--max-tokens", MaxTokensSchema), 32)
        .option("--seed <s>", "seed for sizes and text", numberOption("--seed", SeedSchema))
        .option("--no-prefix-cache-probe", "skip the prefix-cache probes (a victim's PIN, an attacker's guesses, the cached tokens it is told, the time to first token)")
        .option("--timing-pairs <n>", "rounds per kind of attacker request in the time-to-first-token probe (0 skips it)",
            numberOption("--timing-pairs", TimingPairsSchema), 16)
        .option("--json", "JSON report on stdout")
        .action(async (options: AuditOptions) => {
            const json = options.json === true;
            // A bar for a person at a terminal; with --json and no terminal, stderr stays for errors only.
            const progress = json && process.stderr.isTTY !== true
                ? null
                : new StepProgress(process.stderr, {label: "audit", total: options.requests, unit: "requests"});
            try {
                const {auditEndpoint} = await import("../endpointAudit/auditEndpoint.js"); // the OpenAI client: only here
                const report = await auditEndpoint({
                    baseURL: options.endpoint, model: options.model, apiKey: cloudApiKeyFromEnvironment(),
                    tenants: options.tenants, requests: options.requests, concurrency: options.concurrency,
                    contextLimit: options.contextLimit ?? null, maxTokens: options.maxTokens, seed: options.seed, prefixCacheProbe: options.prefixCacheProbe,
                    timingPairs: options.timingPairs,
                    onProgress: progress == null ? undefined : (done) => progress.update(done)
                });
                progress?.finish();
                if (json)
                    printJson(report);
                else
                    printReport(report);

                if (foundLeak(report))
                    process.exitCode = exitCodes.leakFound;
                else if (report.completed === 0)
                    reportError(new CleanroomError("CLOUD_REQUEST_FAILED",
                        `The endpoint answered none of the ${report.requests} requests, so nothing was proven` +
                        `${report.errors[0] != null ? ` (first error: ${report.errors[0].message})` : ""}.`,
                        {requests: report.requests, errors: report.errors.length}), json);
            } catch (error) {
                progress?.finish();
                reportError(error, json);
            }
        });
}

function printReport(report: AuditReport) {
    const write = (line: string) => process.stdout.write(`${line}\n`);
    write(`${report.endpoint} (${report.model}), context limit ${report.contextLimit ?? "unknown"}`);
    write(`${report.requests} requests (${report.sizes.normal} normal, ${report.sizes.nearLimit} near the limit, ` +
        `${report.sizes.overLimit} past it), ${report.completed} answered, ${report.errors.length} errors`);
    write(`Oversize requests accepted instead of refused: ${report.oversizeAccepted} of ${report.oversizeRequests}`);
    write(`Leaks: ${report.leaks.length}`);
    if (report.leaks.length > 0)
        process.stdout.write(formatTable([{header: "REQUEST", align: "right"}, {header: "TENANT"}, {header: "KIND"}, {header: "DATA OF"}],
            report.leaks.map((leak) => [String(leak.request), leak.tenant, leak.kind, leak.from.join(", ")]), {indent: "  "}));
    if (report.prefixCache != null)
        printPrefixCache(report.prefixCache, write);
    if (report.prefixCacheSalted != null)
        write(describeSaltHonoured(report.prefixCacheSalted));
    if (report.prefixCacheTiming != null)
        printPrefixCacheTiming(report.prefixCacheTiming, write);
    if (foundLeak(report))
        write("Result: NOT SAFE for shared use (exit 3).");
    else if (report.completed > 0)
        write("Result: no leak found, every oversize request refused.");
}

function printPrefixCache(probe: PrefixCacheProbeReport, write: (line: string) => void) {
    write(`Prefix cache: a victim sends its bank PIN ${probe.secret}; an attacker sends the same opening with a guess ` +
        `(cached tokens read from ${probe.measuredBy ?? "nowhere: the endpoint reports none"})`);
    process.stdout.write(formatTable([{header: "GUESS"}, {header: "PROMPT", align: "right"}, {header: "CACHED", align: "right"}],
        probe.rounds.map((round) => [round.guess, String(round.promptTokens ?? "?"), String(round.cachedTokens ?? "?")]), {indent: "  "}));
    if (probe.error != null)
        write(`  Probe stopped: ${probe.error}`);
    write(probe.leak
        ? `Prefix-cache leaks: another tenant was served up to ${probe.crossTenantCachedTokens} tokens of the victim's prompt from cache` +
            `${probe.bestGuess != null ? `; the most went to the guess ${probe.bestGuess}` : ""}.`
        : "Prefix-cache leaks: 0 (no token of the victim's prompt came back to another tenant).");
}

/** A leak of any kind, or an oversize request accepted: exit 3. */
function foundLeak(report: AuditReport) {
    return report.leaks.length > 0 || report.oversizeAccepted > 0 || report.prefixCache?.leak === true || report.prefixCacheSalted?.leak === true ||
        report.prefixCacheTiming?.leak === true;
}

function printPrefixCacheTiming(timing: PrefixCacheTimingReport, write: (line: string) => void) {
    const spread = (summary: PrefixCacheTimingReport["samePrefixMs"]) => `${summary.median} ms (quartiles ${summary.p25}-${summary.p75})`;
    write(`Time to first token after the victim's request, ${timing.pairs} rounds each: the attacker's same opening ${spread(timing.samePrefixMs)}, ` +
        `an opening of its own ${spread(timing.differentPrefixMs)}; p = ${timing.pValue == null ? "?" : formatP(timing.pValue)} (one-sided Mann-Whitney U)`);
    if (timing.error != null)
        write(`  Probe stopped: ${timing.error}`);
    write(timing.leak
        ? "Prefix-cache timing leak: the victim's opening is answered measurably faster, so it is served from a cache another tenant filled."
        : "Prefix-cache timing leak: none measured (the victim's opening is answered no faster than another).");
}

function formatP(p: number) {
    return p < 0.0001 ? p.toExponential(1) : String(Math.round(p * 10000) / 10000);
}

/** What the probe with a different `cache_salt` for victim and attacker found. */
function describeSaltHonoured(salted: PrefixCacheProbeReport) {
    if (salted.error != null)
        return `cache_salt: not taken (${salted.error.slice(0, 160)}).`;
    if (salted.measuredBy == null)
        return "cache_salt: unknown (the endpoint reports no cached tokens).";
    return salted.leak
        ? `cache_salt: NOT honoured: with different salts, the attacker was still served up to ${salted.crossTenantCachedTokens} cached tokens of the victim's prompt.`
        : "cache_salt: honoured (with different salts, 0 cached tokens).";
}

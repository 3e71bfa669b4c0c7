import type {Command} from "commander";
import {auditEndpoint} from "../../core/node/cloud/audit/auditEndpoint.js";
import {cloudApiKeyFromEnvironment} from "../openCore.js";
import {parseIntegerOption, printJson, reportError} from "../output.js";

type AuditOptions = {
    endpoint: string, model: string, tenants: number, requests: number, concurrency: number,
    contextLimit?: number, maxTokens: number, seed?: number, json?: boolean
};

export function registerAuditCommand(program: Command) {
    program.command("audit")
        .description("Probe an OpenAI-compatible endpoint for cross-tenant leaks (several tenants, canaries, requests near and past the limit)")
        .requiredOption("--endpoint <base-url>", "OpenAI-compatible base URL (key: $CLEANROOM_CLOUD_API_KEY)")
        .requiredOption("--model <name>", "model name at the endpoint")
        .option("--tenants <n>", "tenants to play", parseIntegerOption("--tenants"), 4)
        .option("--requests <n>", "requests in all", parseIntegerOption("--requests"), 40)
        .option("--concurrency <n>", "requests in flight at once", parseIntegerOption("--concurrency"), 4)
        .option("--context-limit <n>", "the endpoint's context limit (default: as it reports)", parseIntegerOption("--context-limit"))
        .option("--max-tokens <n>", "reply budget per request", parseIntegerOption("--max-tokens"), 32)
        .option("--seed <s>", "seed for sizes and text", parseIntegerOption("--seed"))
        .option("--json", "JSON report on stdout")
        .action(async (options: AuditOptions) => {
            const json = options.json === true;
            try {
                const report = await auditEndpoint({
                    baseURL: options.endpoint, model: options.model, apiKey: cloudApiKeyFromEnvironment(),
                    tenants: options.tenants, requests: options.requests, concurrency: options.concurrency,
                    contextLimit: options.contextLimit ?? null, maxTokens: options.maxTokens, seed: options.seed,
                    onProgress: json ? undefined : (done, total) => process.stderr.write(`\r${done}/${total} requests`)
                });
                if (json) {
                    printJson(report);
                    return;
                }
                process.stderr.write("\n");
                process.stdout.write(`${report.endpoint} (${report.model}), context limit ${report.contextLimit ?? "unknown"}\n`);
                process.stdout.write(`${report.requests} requests (${report.sizes.normal} normal, ${report.sizes.nearLimit} near the limit, ` +
                    `${report.sizes.overLimit} past it), ${report.completed} answered, ${report.errors.length} errors\n`);
                process.stdout.write(`Oversize requests accepted instead of refused: ${report.oversizeAccepted} of ${report.oversizeRequests}\n`);
                process.stdout.write(`Leaks: ${report.leaks.length}\n`);
                for (const leak of report.leaks)
                    process.stdout.write(`  request ${leak.request} (${leak.tenant}): ${leak.kind}${leak.from.length > 0 ? ` from ${leak.from.join(", ")}` : ""}\n`);
            } catch (error) {
                reportError(error, json);
            }
        });
}

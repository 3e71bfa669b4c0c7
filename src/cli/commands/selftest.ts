import type {Command} from "commander";
import type {ProbeResult} from "../../core/node/selftest/probe.js";
import {exitCodes, printJson, reportError} from "../output.js";
import {formatTable} from "../formatTable.js";
import {numberOption} from "../optionParsers.js";
import {ContextSizeSchema, MaxTokensSchema, ThreadsSchema} from "../../core/common/api/limits.js";
import {runCliForOutput} from "../cliCommand.js";
import {CleanroomError} from "../../core/common/errors.js";

export function registerSelfTestCommand(program: Command) {
    program.command("selftest")
        .description("Prove isolation on this machine (scrub, differential, overflow, ownership); exits 0 only if all pass")
        .option("--model <gguf>", "GGUF model file (default: $CLEANROOM_MODEL)")
        .option("--threads <n>", "thread count (default: measured)", numberOption("--threads", ThreadsSchema))
        .option("--context-size <n>", "tokens per context", numberOption("--context-size", ContextSizeSchema))
        .option("--json", "JSON output")
        .action(async (options: {model?: string, threads?: number, contextSize?: number, json?: boolean}) => {
            const json = options.json === true;
            try {
                const [{resolveModelPath}, {runSelfTest}] = await Promise.all([import("../openCore.js"), import("../../core/node/selftest/runSelfTest.js")]);
                const modelPath = resolveModelPath(options.model);
                if (modelPath == null)
                    throw new CleanroomError("MODEL_NOT_LOADED", "No model: pass --model <gguf>, set CLEANROOM_MODEL, or choose a default with `models default`.");

                const report = await runSelfTest({
                    modelPath,
                    threads: options.threads,
                    contextSize: options.contextSize,
                    probeInFreshProcess: async (request) => JSON.parse(await runCliForOutput([
                        "selftest-probe", "--model", modelPath, "--threads", String(request.threads),
                        "--context-size", String(request.contextSize), "--system", request.systemPrompt,
                        "--prompt", request.prompt, "--max-tokens", String(request.maxTokens)
                    ])) as ProbeResult
                });
                if (json)
                    printJson({passed: report.passed, checks: report.checks.map(({name, passed, detail}) => ({name, passed, detail})),
                        model: report.model, threads: report.threads, contextSize: report.contextSize});
                else {
                    process.stdout.write(formatTable([{header: "CHECK"}, {header: "RESULT"}, {header: "DETAIL"}],
                        report.checks.map((check) => [check.name, check.passed ? "PASS" : "FAIL", check.detail])));
                    process.stdout.write(report.passed ? "All isolation checks passed.\n" : "Isolation self-test FAILED.\n");
                }
                if (!report.passed)
                    process.exitCode = exitCodes.securityFault;
            } catch (error) {
                reportError(error, json);
            }
        });

    // Used by the differential check: the same probe, in a process that has seen nothing else.
    program.command("selftest-probe", {hidden: true})
        .requiredOption("--model <gguf>")
        .requiredOption("--threads <n>", "", numberOption("--threads", ThreadsSchema))
        .requiredOption("--context-size <n>", "", numberOption("--context-size", ContextSizeSchema))
        .requiredOption("--system <text>")
        .requiredOption("--prompt <text>")
        .requiredOption("--max-tokens <n>", "", numberOption("--max-tokens", MaxTokensSchema))
        .action(async (options: {model: string, threads: number, contextSize: number, system: string, prompt: string, maxTokens: number}) => {
            const [{Core}, {loadLlama}, {probeGreedyReply}] = await Promise.all([
                import("../../core/node/Core.js"), import("../../core/node/engine/loadLlama.js"), import("../../core/node/selftest/probe.js")
            ]);
            const core = Core.create(await loadLlama(), {
                database: ":memory:", engine: {threads: options.threads, contextSize: options.contextSize, pool: {idleTimeoutMs: 0}}
            });
            try {
                await core.loadModel(options.model);
                printJson(await probeGreedyReply(core, {systemPrompt: options.system, prompt: options.prompt, maxTokens: options.maxTokens}));
            } catch (error) {
                reportError(error, true);
            } finally {
                await core.close();
            }
        });
}

import type {Command} from "commander";
import type {ProbeResult} from "../../core/node/selftest/probe.js";
import type {SelfTestReport} from "../../core/node/selftest/runSelfTest.js";
import {exitCodes, printJson, reportError, reportWarning} from "../output.js";
import {formatTable} from "../formatTable.js";
import {gpuOption, gpuOptionDescription, numberOption} from "../optionParsers.js";
import type {GpuSetting} from "../../core/common/api/types.js";
import {ContextSizeSchema, MaxTokensSchema, ThreadsSchema} from "../../core/common/api/limits.js";
import {runCliForOutput} from "../cliCommand.js";

/** The `Device check:` line: the GPU device's isolation probe, its cost, and what a failure did. */
function describeDeviceCheck(check: NonNullable<SelfTestReport["deviceCheck"]>) {
    const how = check.source === "probed" ? `probed in ${Math.round(check.durationMs)} ms` : `cached, probed earlier in ${Math.round(check.durationMs)} ms`;
    return check.passed
        ? `Device check: ${check.device} passed the isolation probe (${how}).\n`
        : `Device check: ${check.device} FAILED the isolation probe (${how}): ${check.problem ?? "unknown"}; it is not used, the model runs on the CPU.\n`;
}

export function registerSelfTestCommand(program: Command) {
    program.command("selftest")
        .description("Prove isolation on this machine (scrub, differential, overflow, ownership); exits 0 only if all pass")
        .option("--model <gguf>", "GGUF model file (default: $CLEANROOM_MODEL)")
        .option("--threads <n>", "thread count (default: measured)", numberOption("--threads", ThreadsSchema))
        .option("--context-size <n>", "tokens per context", numberOption("--context-size", ContextSizeSchema))
        .option("--gpu <backend>", gpuOptionDescription, gpuOption)
        .option("--json", "JSON output")
        .action(async (options: {model?: string, threads?: number, contextSize?: number, gpu?: GpuSetting, json?: boolean}) => {
            const json = options.json === true;
            try {
                const [{requireCliModel}, {runSelfTest}] = await Promise.all([import("../openCore.js"), import("../../core/node/selftest/runSelfTest.js")]);
                const modelPath = requireCliModel(options.model);

                const report = await runSelfTest({
                    modelPath,
                    threads: options.threads,
                    contextSize: options.contextSize,
                    gpu: options.gpu,
                    probeInFreshProcess: async (request) => JSON.parse(await runCliForOutput([
                        "selftest-probe", "--model", modelPath, "--threads", String(request.threads), "--gpu", request.gpu,
                        "--context-size", String(request.contextSize), "--system", request.systemPrompt,
                        "--prompt", request.prompt, "--max-tokens", String(request.maxTokens)
                    ])) as ProbeResult
                });
                if (report.contextSizeNotice != null)
                    reportWarning({code: "CONTEXT_SIZE_CAPPED", message: report.contextSizeNotice}, json);
                if (json)
                    printJson({passed: report.passed, checks: report.checks.map(({name, passed, detail}) => ({name, passed, detail})),
                        model: report.model, threads: report.threads, contextSize: report.contextSize,
                        gpu: report.gpu, gpuDevice: report.gpuDevice, gpuLayers: report.gpuLayers, modelLayers: report.modelLayers, kvReadBack: report.kvReadBack,
                        deviceCheck: report.deviceCheck, architecture: report.architecture, sequenceMemory: report.sequenceMemory, stateCovered: report.stateCovered, stateCoverageProblem: report.stateCoverageProblem});
                else {
                    process.stdout.write(report.gpu == null ? "Backend: CPU (no layer offloaded).\n"
                        : `Backend: ${report.gpu} on ${report.gpuDevice ?? "an unnamed device"}, ${report.gpuLayers} of ${report.modelLayers} layers offloaded; ` +
                            `KV read-back from the device ${report.kvReadBack === "verified" ? "verified" : "NOT verified"}.\n`);
                    if (report.deviceCheck != null)
                        process.stdout.write(describeDeviceCheck(report.deviceCheck));
                    process.stdout.write(report.stateCovered
                        ? `State: ${report.architecture} (${report.sequenceMemory}): the scrub zeroes and reads back all of it.\n`
                        : `State: ${report.architecture} (${report.sequenceMemory}): NOT all zeroed and read back, so every scrub is unverified: ${report.stateCoverageProblem ?? "unknown"}.\n`);
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
        .option("--gpu <backend>", "", gpuOption)
        .action(async (options: {model: string, threads: number, contextSize: number, gpu?: GpuSetting, system: string, prompt: string, maxTokens: number}) => {
            const [{Core}, {loadLlama}, {probeGreedyReply}] = await Promise.all([
                import("../../core/node/Core.js"), import("../../core/node/engine/loadLlama.js"), import("../../core/node/selftest/probe.js")
            ]);
            const core = Core.create(await loadLlama(options.gpu), {
                database: ":memory:", engine: {threads: options.threads, contextSize: options.contextSize, pool: {idleTimeoutMs: 0}}
            });
            try {
                await core.loadModel(options.model);
                printJson(await probeGreedyReply(core, {systemPrompt: options.system, prompt: options.prompt, maxTokens: options.maxTokens}));
            } catch (error) {
                reportError(error, true);
            } finally {
                await core.dispose();
            }
        });
}

import type {Command} from "commander";
import type {EngineBinary, EngineStatus} from "../../core/common/api/engineSchemas.js";
import {formatDuration} from "../formatDuration.js";
import {printJson, reportError} from "../output.js";

type EngineCliOptions = {json?: boolean};

/**
 * `cleanroom engine status|build`: which llama.cpp binary runs models (node-llama-cpp's prebuilt one
 * or one built here for this CPU), and building that one (docs/threads.md says why it can be faster).
 */
export function registerEngineCommand(program: Command) {
    const engine = program.command("engine").description("The llama.cpp binary that runs models: which one, and building one for this CPU");
    engine.command("status")
        .description("which binary a model load uses (prebuilt or built here), its compiler and folder, and whether cmake and a C++ compiler are here")
        .option("--json", "JSON output")
        .action((options: EngineCliOptions) => status(options));
    engine.command("build")
        .description("build llama.cpp for this CPU with OpenMP (about 10 minutes on 2 cores; needs cmake, a C++ compiler and make); " +
            "used from the next start. Ctrl+C stops it and removes what it made")
        .option("--json", "JSON output (the status once built; progress stays on stderr)")
        .action((options: EngineCliOptions) => build(options));
}

async function status(options: EngineCliOptions) {
    const json = options.json === true;
    try {
        const [{loadLlama}, {readEngineStatus}] = await Promise.all([
            import("../../core/node/engine/loadLlama.js"), import("../../core/node/engine/readEngineStatus.js")
        ]);
        const report = readEngineStatus(await loadLlama());
        if (json)
            printJson(report);
        else
            process.stdout.write(describeStatus(report));
    } catch (error) {
        reportError(error, json);
    }
}

async function build(options: EngineCliOptions) {
    const json = options.json === true;
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    const started = performance.now();
    const elapsed = () => formatDuration((performance.now() - started) / 1000);
    try {
        const [{buildLocalLlama}, {readBinaryCompiler}] = await Promise.all([
            import("../../core/node/engine/buildLocalLlama.js"), import("../../core/node/engine/readBinaryCompiler.js")
        ]);
        const built = await buildLocalLlama({
            signal: controller.signal,
            onProgress: ({phase, percent}) => {
                process.stderr.write(`engine build: ${phaseWords[phase]}${percent == null ? "" : ` ${percent}%`} (${elapsed()})\n`);
            }
        });
        const compiler = readBinaryCompiler(built.binaryDirectory);
        if (json)
            printJson({built: {directory: built.binaryDirectory, compiler, cmakeOptions: built.cmakeOptions}});
        else
            process.stdout.write(`Built for this CPU in ${elapsed()}: ${built.binaryDirectory}${compiler == null ? "" : ` (${compiler})`}.\n` +
                "Cleanroom uses it from the next start of the app, web mode, chat and serve (`cleanroom engine status` says which binary runs).\n");
    } catch (error) {
        reportError(error, json);
    } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
    }
}

const phaseWords = {
    checking: "looking for cmake, a C++ compiler and make",
    preparing: "unpacking and configuring llama.cpp's source",
    compiling: "compiling",
    finishing: "putting the binaries in place"
} as const;

function describeStatus(report: EngineStatus): string {
    const binary = (what: EngineBinary) => `${what.description}\n  folder:   ${what.directory ?? "unknown"}\n  compiler: ${what.compiler ?? "unknown"}\n`;
    const lines = [
        `In use: ${binary(report.inUse)}`,
        report.localBuild == null ? "Built here: none\n" : `Built here: ${binary(report.localBuild)}  options:  ${Object.entries(report.localBuild.cmakeOptions).map(([name, value]) => `${name}=${value}`).join(" ")}\n`,
        `Next start: ${report.nextStart === "local" ? "the build made here" : "the prebuilt binary"}\n`,
        `Build tools: ${report.tools.map((tool) => `${tool.tool} ${tool.path ?? `missing (Debian package ${tool.debianPackage})`}`).join("; ")}\n`
    ];
    if (report.inUse.kind === "prebuilt" && report.localBuild == null)
        lines.push(report.canBuild
            ? "`cleanroom engine build` builds llama.cpp for this CPU (about 10 minutes), often faster at reading prompts.\n"
            : "A build for this CPU needs every tool above and the CPU to run models.\n");
    return lines.join("");
}
